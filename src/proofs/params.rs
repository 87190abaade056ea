//! Parameters of Filecoin circuits: finding them where filecoin-proofs does, and generating
//! random test parameters under the same names.

use std::path::{Path, PathBuf};

use bellperson::groth16::Parameters;
use bellperson::Circuit;
use blstrs::{Bls12, Scalar};

use super::circuits::{BlankCircuitVisitor, CircuitKind};
use crate::groth16::paramgen::{self, cache};
use crate::groth16::PartedCircuit;

/// Environment variable naming the parameter directory (as in filecoin-proofs).
pub const PARAMETER_CACHE_ENV: &str = "FIL_PROOFS_PARAMETER_CACHE";

/// The `.params` file of `kind` in `dir`, or an error naming the file and the variable to set.
pub fn params_file(kind: CircuitKind, dir: &Path) -> anyhow::Result<PathBuf> {
    let key = kind.cache_key()?;
    let path = cache::params_path(dir, &key.id);
    if !path.is_file() {
        anyhow::bail!(
            "missing parameter file {} for {} (set {PARAMETER_CACHE_ENV} to the directory holding it, \
             or generate test parameters with `cuzk params generate {}`)",
            path.display(),
            kind.name(),
            kind.name()
        );
    }
    Ok(path)
}

struct Generate<'a, R> {
    rng: &'a mut R,
    progress: &'a (dyn Fn(usize, usize) + Sync),
    out: Option<crate::groth16::Result<Parameters<Bls12>>>,
}

impl<R: rand_core::RngCore> BlankCircuitVisitor for Generate<'_, R> {
    fn visit<C: Circuit<Scalar>>(&mut self, circuit: C) {
        self.out = Some(paramgen::generate(circuit, self.rng, self.progress));
    }

    fn visit_parted<P: PartedCircuit>(&mut self, circuit: P) {
        self.out = Some(paramgen::generate_parted(circuit, self.rng, self.progress));
    }
}

/// Generates random (insecure, test-only) parameters for `kind` and writes `.params`, `.vk` and
/// `.meta` into `dir` under filecoin-proofs' names; returns the `.params` path.
pub fn generate_for_kind(
    kind: CircuitKind,
    dir: &Path,
    rng: &mut impl rand_core::RngCore,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> anyhow::Result<PathBuf> {
    let key = kind.cache_key()?;
    let mut visitor = Generate {
        rng,
        progress,
        out: None,
    };
    kind.visit_blank(&mut visitor)?;
    let params = visitor
        .out
        .ok_or_else(|| anyhow::anyhow!("no blank circuit for {}", kind.name()))??;
    cache::write_params(dir, &key.id, &params, &key.meta)?;
    Ok(cache::params_path(dir, &key.id))
}

/// Generates parameters for `kind` unless all three files already exist; returns the path.
pub fn ensure_for_kind(
    kind: CircuitKind,
    dir: &Path,
    rng: &mut impl rand_core::RngCore,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> anyhow::Result<PathBuf> {
    let key = kind.cache_key()?;
    if cache::is_cached(dir, &key.id) {
        return Ok(cache::params_path(dir, &key.id));
    }
    generate_for_kind(kind, dir, rng, progress)
}
