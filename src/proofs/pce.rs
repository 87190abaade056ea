//! The pre-compiled constraint system (PCE) of a Filecoin circuit kind: loaded from beside its
//! parameter file, or recorded from the kind's blank circuit (then saved there for the next
//! start), and attached to the resident parameters so it is built once and evicted with them.
//! The engine never makes a proof wait for a recording: it records in the background and
//! synthesizes the plain way meanwhile (`cuzk params pce --save` records ahead of time).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use bellperson::Circuit;
use blstrs::Scalar;
use log::{info, warn};

use super::circuits::{BlankCircuitVisitor, CircuitKind};
use super::error::{ProofError, ProofResult};
use crate::groth16::pce::{file, record, record_parted};
use crate::groth16::{CircuitShape, Groth16Error, PartedCircuit, Pce, Srs};

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

        fn visit_parted<P: PartedCircuit>(&mut self, circuit: P) {
            self.0 = Some(record_parted(circuit));
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

/// Whether `pce` is the circuit parameters of `shape` prove (same inputs and aux and domain).
fn fits(pce: &Pce, shape: CircuitShape) -> bool {
    pce.num_inputs == shape.inputs
        && pce.num_aux == shape.aux
        && pce.shape().domain() == shape.constraints
}

/// Loads `kind`'s PCE from `params_dir` if a usable one is saved there.
fn load_saved(kind: CircuitKind, key: &str, shape: CircuitShape, params_dir: &Path) -> Option<Pce> {
    let path = pce_path(kind, params_dir).ok()?;
    if !path.exists() {
        return None;
    }
    let t = Instant::now();
    match file::load(&path, key) {
        Ok(pce) if fits(&pce, shape) => {
            info!(
                "PCE {}: loaded {} MiB in {:.1}s",
                kind.name(),
                pce.byte_size() >> 20,
                t.elapsed().as_secs_f64()
            );
            Some(pce)
        }
        Ok(_) => {
            warn!(
                "PCE {} does not fit its parameters: recording it again",
                path.display()
            );
            None
        }
        Err(e) => {
            warn!("PCE not loaded ({e}): recording it again");
            None
        }
    }
}

/// Records `kind`'s PCE, checks it against the parameters' shape, saves it to `params_dir`
/// (a failure to save is only logged).
fn record_and_save(
    kind: CircuitKind,
    key: &str,
    shape: CircuitShape,
    params_dir: &Path,
) -> ProofResult<Pce> {
    let t = Instant::now();
    let pce = record_kind(kind)?;
    if !fits(&pce, shape) {
        return Err(ProofError::Groth16(Groth16Error::ShapeMismatch(format!(
            "{} circuit ({} inputs, {} aux, {} constraints) does not match its parameters {shape:?}",
            kind.name(),
            pce.num_inputs,
            pce.num_aux,
            pce.num_constraints,
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
    match pce_path(kind, params_dir) {
        Ok(path) => {
            if let Err(e) = file::save(&pce, key, &path) {
                warn!("PCE {} not saved: {e}", path.display());
            }
        }
        Err(e) => warn!("PCE of {} not saved: {e}", kind.name()),
    }
    Ok(pce)
}

/// The PCE of `kind` for its parameters `srs`, built now if need be: attached to them if built
/// before, else loaded from `params_dir`, else recorded (and saved to `params_dir` when it is
/// writable). Waits for a build already under way.
pub fn kind_pce(kind: CircuitKind, srs: &Srs, params_dir: &Path) -> ProofResult<Arc<Pce>> {
    let shape = srs.circuit_shape();
    srs.pce_slot().get_or_build(|| {
        let key = kind.cache_key().map_err(ProofError::filecoin)?.id;
        match load_saved(kind, &key, shape, params_dir) {
            Some(pce) => Ok(pce),
            None => record_and_save(kind, &key, shape, params_dir),
        }
    })
}

/// The PCE of `kind` if it can be had without recording: attached, or saved in `params_dir`
/// (loaded now). Otherwise starts recording it on a background thread (once per parameter
/// set; the result is attached to `srs` and saved) and returns None, so the caller
/// synthesizes without it: recording a 32 GiB PoRep circuit takes minutes, and no proof
/// waits for it.
pub fn kind_pce_or_record_later(
    kind: CircuitKind,
    srs: &Srs,
    params_dir: &Path,
) -> Option<Arc<Pce>> {
    let slot = srs.pce_slot();
    if let Some(pce) = slot.get() {
        return Some(pce);
    }
    if !slot.claim() {
        return None; // being built
    }
    let shape = srs.circuit_shape();
    let key = match kind.cache_key() {
        Ok(k) => k.id,
        Err(e) => {
            warn!("PCE of {}: {e}", kind.name());
            slot.finish(None);
            return None;
        }
    };
    if let Some(pce) = load_saved(kind, &key, shape, params_dir) {
        return slot.finish(Some(pce));
    }
    let slot = Arc::clone(slot);
    let dir = params_dir.to_path_buf();
    let spawned = std::thread::Builder::new()
        .name(format!("cuzk-pce-{}", kind.name()))
        .spawn({
            let slot = Arc::clone(&slot);
            move || {
                let recorded =
                    std::panic::catch_unwind(|| record_and_save(kind, &key, shape, &dir));
                match recorded {
                    Ok(Ok(pce)) => {
                        slot.finish(Some(pce));
                    }
                    Ok(Err(e)) => {
                        warn!("PCE of {} not recorded: {e}", kind.name());
                        slot.finish(None);
                    }
                    Err(_) => {
                        warn!(
                            "PCE of {} not recorded: the recording panicked",
                            kind.name()
                        );
                        slot.finish(None);
                    }
                }
            }
        });
    if let Err(e) = spawned {
        warn!("PCE of {} not recorded: no thread ({e})", kind.name());
        slot.finish(None);
    }
    None
}
