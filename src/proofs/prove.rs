//! The blocking prover: request -> circuits per partition -> synthesis -> backend -> proof
//! bytes in partition order -> self-check with filecoin-proofs' verifier. The engine will
//! pipeline the same steps.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use log::debug;

use super::circuits::CircuitKind;
use super::error::{ProofError, ProofResult};
use super::params::params_file;
use super::request::ProofRequest;
use crate::groth16::{verify, BufferSet, ProverBackend, Randomness, Srs};

/// One parameter set's slot: locked while it is being decoded, then holds it.
type SrsSlot = Arc<Mutex<Option<Arc<Srs>>>>;

/// Decoded parameter sets, loaded once per kind and shared by reference, with the circuit's
/// recorded constraint system (PCE) attached on first use unless turned off.
pub struct SrsCache {
    dir: PathBuf,
    entries: Mutex<HashMap<String, SrsSlot>>,
    pce: bool,
}

impl SrsCache {
    /// A cache reading `.params` files from `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            entries: Mutex::default(),
            pce: true,
        }
    }

    /// Turns synthesis through the recorded constraint system (PCE) on (the default) or off
    /// (every constraint evaluated as the circuit enforces it, as bellperson does).
    pub fn with_pce(mut self, enabled: bool) -> Self {
        self.pce = enabled;
        self
    }

    /// Whether synthesis goes through the PCE.
    pub fn pce_enabled(&self) -> bool {
        self.pce
    }

    /// A cache reading from `FIL_PROOFS_PARAMETER_CACHE` (or filecoin-proofs' default).
    pub fn from_env() -> Self {
        Self::new(crate::groth16::paramgen::cache::cache_dir())
    }

    /// The parameter directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The SRS of `kind`, decoding it on first use. Concurrent callers for the same kind wait
    /// for one decode; the map lock is never held while decoding.
    pub fn get(&self, kind: CircuitKind) -> ProofResult<Arc<Srs>> {
        let key = kind.cache_key().map_err(ProofError::filecoin)?.id;
        let slot = {
            let mut entries = self.entries.lock().expect("SRS map lock");
            Arc::clone(entries.entry(key).or_default())
        };
        let mut slot = slot.lock().expect("SRS slot lock");
        if let Some(srs) = slot.as_ref() {
            return Ok(Arc::clone(srs));
        }
        let path = params_file(kind, &self.dir)
            .map_err(|e| ProofError::MissingParameters(format!("{e:#}")))?;
        let t = Instant::now();
        let srs = Arc::new(Srs::read_file(&path)?);
        debug!(
            "SRS {} loaded in {:.1} ms ({} MiB)",
            kind.name(),
            t.elapsed().as_secs_f64() * 1e3,
            srs.byte_size() >> 20
        );
        *slot = Some(Arc::clone(&srs));
        Ok(srs)
    }
}

/// Time spent in each step of a blocking proof, in milliseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProveTimings {
    /// Circuit building and synthesis, all partitions.
    pub synth_ms: f64,
    /// prove_start + prove_finish, all partitions.
    pub prove_ms: f64,
    /// Per-partition pairing checks and filecoin-proofs' verifier.
    pub verify_ms: f64,
}

/// Proves `request` with fresh randomness and verifies the result before returning it.
pub fn prove<B: ProverBackend>(
    request: &ProofRequest,
    srs: &SrsCache,
    backend: &B,
) -> ProofResult<Vec<u8>> {
    let mut rng = rand::rngs::OsRng;
    let randomness: Vec<Randomness> = (0..request.partitions())
        .map(|_| Randomness::random(&mut rng))
        .collect();
    prove_with_randomness(request, srs, backend, &randomness).map(|(bytes, _)| bytes)
}

/// Proves `request` with the given (r, s) per partition (tests compare against bellperson with
/// the same values), checks every partition and the whole proof, and reports timings.
pub fn prove_with_randomness<B: ProverBackend>(
    request: &ProofRequest,
    srs_cache: &SrsCache,
    backend: &B,
    randomness: &[Randomness],
) -> ProofResult<(Vec<u8>, ProveTimings)> {
    let partitions = request.partitions();
    if randomness.len() != partitions {
        return Err(ProofError::InvalidArgument(format!(
            "{} randomness pairs for {partitions} partitions",
            randomness.len()
        )));
    }
    let srs = srs_cache.get(request.circuit_kind())?;
    let pce = if srs_cache.pce {
        Some(super::pce::kind_pce(
            request.circuit_kind(),
            &srs,
            &srs_cache.dir,
        )?)
    } else {
        None
    };
    let mut timings = ProveTimings::default();
    let mut bytes = Vec::with_capacity(partitions * crate::groth16::PROOF_BYTES);
    let mut proofs = Vec::with_capacity(partitions);
    for (k, r) in randomness.iter().enumerate() {
        let t = Instant::now();
        let (assignment, inputs) =
            request.synthesize_partition(k, BufferSet::default(), pce.as_deref())?;
        let synth_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let proof = backend.prove(assignment, &srs, *r)?;
        let prove_ms = t.elapsed().as_secs_f64() * 1e3;
        debug!(
            "{} partition {k}: synth_ms={synth_ms:.1} prove_ms={prove_ms:.1}",
            request.kind_name()
        );
        timings.synth_ms += synth_ms;
        timings.prove_ms += prove_ms;
        bytes.extend_from_slice(&proof.to_bytes());
        proofs.push((proof, inputs));
    }
    let t = Instant::now();
    for (k, (proof, inputs)) in proofs.iter().enumerate() {
        if !verify(&srs, proof, inputs) {
            return Err(failed(request, Some(k)));
        }
    }
    let bytes = request.finish(bytes)?;
    if !request.verify(&bytes)? {
        return Err(failed(request, None));
    }
    timings.verify_ms = t.elapsed().as_secs_f64() * 1e3;
    Ok((bytes, timings))
}

fn failed(request: &ProofRequest, partition: Option<usize>) -> ProofError {
    ProofError::VerificationFailed {
        kind: request.kind_name(),
        subject: request.subject(),
        partition: partition
            .map(|k| format!(", partition {k}"))
            .unwrap_or_default(),
    }
}
