//! The pre-compiled constraint system (PCE) of a Filecoin circuit kind: loaded from beside its
//! parameter file, or recorded from the kind's blank circuit (then saved there for the next
//! start), and attached to the resident parameters so it is built once and evicted with them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use bellperson::Circuit;
use blstrs::Scalar;
use log::{info, warn};

use super::circuits::{BlankCircuitVisitor, CircuitKind};
use super::error::{ProofError, ProofResult};
use crate::groth16::pce::{file, record};
use crate::groth16::{Groth16Error, Pce, Srs};

/// Where a kind's PCE is saved: next to its parameters, `v28-<cache id>.pce`.
pub fn pce_path(kind: CircuitKind, params_dir: &Path) -> ProofResult<PathBuf> {
    let key = kind.cache_key().map_err(ProofError::filecoin)?;
    Ok(params_dir.join(format!("v28-{}.pce", key.id)))
}

/// Records `kind`'s constraint system from its blank circuit.
pub fn record_kind(kind: CircuitKind) -> ProofResult<Pce> {
    struct Recorder(Option<Result<Pce, bellperson::SynthesisError>>);
    impl BlankCircuitVisitor for Recorder {
        fn visit<C: Circuit<Scalar>>(&mut self, circuit: C) {
            self.0 = Some(record(circuit));
        }
    }
    let mut recorder = Recorder(None);
    kind.visit_blank(&mut recorder)
        .map_err(ProofError::filecoin)?;
    let pce = recorder
        .0
        .ok_or_else(|| ProofError::NotSupported(format!("no blank circuit for {}", kind.name())))?
        .map_err(Groth16Error::from)?;
    Ok(pce)
}

/// Whether `pce` is the circuit `srs` proves (same inputs and aux, a domain that fits).
fn fits(pce: &Pce, srs: &Srs) -> bool {
    let shape = srs.circuit_shape();
    pce.num_inputs == shape.inputs
        && pce.num_aux == shape.aux
        && pce.shape().domain() == shape.constraints
}

/// The PCE of `kind` for its parameters `srs`: attached to them if built before, else loaded
/// from `params_dir`, else recorded (and saved to `params_dir` when it is writable).
pub fn kind_pce(kind: CircuitKind, srs: &Srs, params_dir: &Path) -> ProofResult<Arc<Pce>> {
    srs.pce_or_build(|srs| {
        let key = kind.cache_key().map_err(ProofError::filecoin)?.id;
        let path = pce_path(kind, params_dir)?;
        if path.exists() {
            let t = Instant::now();
            match file::load(&path, &key) {
                Ok(pce) if fits(&pce, srs) => {
                    info!(
                        "PCE {}: loaded {} MiB in {:.1}s",
                        kind.name(),
                        pce.byte_size() >> 20,
                        t.elapsed().as_secs_f64()
                    );
                    return Ok(pce);
                }
                Ok(_) => warn!("PCE {} does not fit its parameters: recording it again", path.display()),
                Err(e) => warn!("PCE not loaded ({e}): recording it again"),
            }
        }
        let t = Instant::now();
        let pce = record_kind(kind)?;
        if !fits(&pce, srs) {
            return Err(ProofError::Groth16(Groth16Error::ShapeMismatch(format!(
                "{} circuit ({} inputs, {} aux, {} constraints) does not match its parameters {:?}",
                kind.name(),
                pce.num_inputs,
                pce.num_aux,
                pce.num_constraints,
                srs.circuit_shape()
            ))));
        }
        info!(
            "PCE {}: recorded in {:.1}s: {} constraints, {} non-zeros, {} bytes ({:.2} bytes per non-zero)",
            kind.name(),
            t.elapsed().as_secs_f64(),
            pce.num_constraints,
            pce.nonzeros(),
            pce.byte_size(),
            pce.byte_size() as f64 / pce.nonzeros().max(1) as f64
        );
        if let Err(e) = file::save(&pce, &key, &path) {
            warn!("PCE {} not saved: {e}", path.display());
        }
        Ok(pce)
    })
}
