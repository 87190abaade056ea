//! Proof jobs over the C ABI: `cuzk_submit_*` queue a job on an engine, `cuzk_prove_*` submit
//! and wait (filecoin-ffi's one-shot style). Every `cuzk_prove_*` accepts a null engine to use
//! the process-wide default engine, opened on first use with the default config.

use std::ffi::c_char;
use std::sync::Arc;

use super::engine::{engine_or_default, CuzkEngine, OpenEngine};
use super::guard::{bytes, call, invalid, non_null, slices, FfiError};
use super::types::{CuzkBytes, CuzkCode, CuzkSlice};
use crate::engine::{JobId, Workload};
use crate::proofs::porep::PoRepRequest;
use crate::proofs::post::PostRequest;
use crate::proofs::snap::SnapDealsRequest;
use crate::proofs::verify::{verify_window_post, ChallengedSector};
use crate::proofs::workload::FilecoinWorkload;
use crate::proofs::ProofRequest;

/// `partition_index` value for `cuzk_prove_window_post` meaning "every partition": the vanilla
/// proofs are cut into partitions and the merged WindowPoSt proof is returned.
pub const CUZK_ALL_PARTITIONS: u64 = u64::MAX;

/// `registered_proof` value for PoRep meaning "take it from the C1 output".
pub const CUZK_REGISTERED_FROM_C1: u64 = u64::MAX;

fn submit(e: &OpenEngine, request: ProofRequest) -> Result<JobId, FfiError> {
    let workload: Arc<dyn Workload> = FilecoinWorkload::new(request, e.params_dir.clone(), e.pce);
    Ok(e.engine.submit(workload)?)
}

/// Submits every request, then waits for all of them in order and concatenates the proofs.
/// If a submit fails, the jobs already queued are cancelled.
fn prove_all(e: &OpenEngine, requests: Vec<ProofRequest>) -> Result<Vec<u8>, FfiError> {
    let mut jobs = Vec::with_capacity(requests.len());
    for request in requests {
        match submit(e, request) {
            Ok(id) => jobs.push(id),
            Err(err) => {
                for id in jobs {
                    let _ = e.engine.cancel(id);
                }
                return Err(err);
            }
        }
    }
    let mut proof = Vec::new();
    let mut first_error = None;
    for id in jobs {
        // Await every job even after a failure, so no result is left behind in the engine.
        match e.engine.await_job(id, None) {
            Ok(p) if first_error.is_none() => proof.extend_from_slice(&p),
            Ok(_) => {}
            Err(err) => {
                first_error.get_or_insert(FfiError::from(err));
            }
        }
    }
    match first_error {
        Some(err) => Err(err),
        None => Ok(proof),
    }
}

/// Where a job call's result goes: `Job` queues and writes the job id, `Proof` proves, waits
/// and writes the proof.
pub(super) enum Output {
    /// `cuzk_submit_*`: the job id.
    Job(*mut u64),
    /// `cuzk_prove_*`: the proof bytes.
    Proof(*mut CuzkBytes),
}

impl Output {
    fn check(&self) -> Result<(), FfiError> {
        match *self {
            Output::Job(p) => non_null(p, "job_out"),
            Output::Proof(p) => {
                non_null(p, "proof_out")?;
                // SAFETY: non-null and writable per the callers' contracts.
                unsafe { *p = CuzkBytes::empty() };
                Ok(())
            }
        }
    }

    fn deliver(self, e: &OpenEngine, requests: Vec<ProofRequest>) -> Result<(), FfiError> {
        self.deliver_checked(e, requests, |_| Ok(()))
    }

    /// As `deliver`; a proof (not a job id) must also pass `check` before it is handed out.
    fn deliver_checked(
        self,
        e: &OpenEngine,
        requests: Vec<ProofRequest>,
        check: impl FnOnce(&[u8]) -> Result<(), FfiError>,
    ) -> Result<(), FfiError> {
        match self {
            Output::Job(p) => {
                let [request]: [ProofRequest; 1] = requests
                    .try_into()
                    .map_err(|_| invalid("a job proves exactly one request"))?;
                let id = submit(e, request)?;
                // SAFETY: checked non-null in `check`.
                unsafe { *p = id.0 };
            }
            Output::Proof(p) => {
                let proof = prove_all(e, requests)?;
                check(&proof)?;
                // SAFETY: checked non-null in `check`.
                unsafe { *p = CuzkBytes::from_vec(proof) };
            }
        }
        Ok(())
    }
}

unsafe fn porep(
    e: *const CuzkEngine,
    c1_json: *const u8,
    c1_len: usize,
    registered_proof: u64,
    sector_number: u64,
    miner_id: Option<u64>,
    out: Output,
) -> Result<(), FfiError> {
    let e = engine_or_default(e, &out)?;
    out.check()?;
    let c1 = bytes(c1_json, c1_len, "c1_json")?;
    if c1.is_empty() {
        return Err(invalid("C1 output is empty"));
    }
    let request = match miner_id {
        None => PoRepRequest::circuit_proofs(c1, sector_number)?,
        Some(miner_id) if registered_proof == CUZK_REGISTERED_FROM_C1 => {
            PoRepRequest::parse_any(c1, sector_number, miner_id)?
        }
        Some(miner_id) => PoRepRequest::parse(c1, registered_proof, sector_number, miner_id)?,
    };
    out.deliver(&e, vec![ProofRequest::PoRep(request)])
}

#[allow(clippy::too_many_arguments)]
unsafe fn post(
    e: *const CuzkEngine,
    registered_proof: u64,
    randomness: *const u8,
    randomness_len: usize,
    miner_id: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    partition_index: Option<u64>,
    out: Output,
) -> Result<(), FfiError> {
    let e = engine_or_default(e, &out)?;
    out.check()?;
    let randomness = bytes(randomness, randomness_len, "randomness")?;
    let vanilla = slices(vanilla, n_vanilla, "vanilla")?;
    let requests = match partition_index {
        None => vec![PostRequest::winning(
            registered_proof,
            randomness,
            miner_id,
            &vanilla,
        )?],
        Some(CUZK_ALL_PARTITIONS) => {
            let requests = PostRequest::window_all_partitions(
                registered_proof,
                randomness,
                miner_id,
                &vanilla,
            )?;
            // The merged proof is checked as a node's verifier checks it: over all sectors.
            let sectors: Vec<ChallengedSector> = requests
                .iter()
                .flat_map(|r| r.sectors.iter())
                .map(|(id, comm_r)| ChallengedSector {
                    registered: registered_proof,
                    number: u64::from(*id),
                    comm_r: comm_r.to_vec(),
                })
                .collect();
            let randomness = randomness.to_vec();
            let requests = requests.into_iter().map(ProofRequest::Post).collect();
            return out.deliver_checked(&e, requests, move |proof| {
                let entry = [(registered_proof, proof.to_vec())];
                match verify_window_post(&randomness, miner_id, &sectors, &entry)? {
                    true => Ok(()),
                    false => Err(FfiError::new(
                        CuzkCode::ProofFailed,
                        "window self-check: the merged WindowPoSt proof does not verify over \
                         all its sectors",
                    )),
                }
            });
        }
        Some(k) => {
            let k = usize::try_from(k).map_err(|_| invalid("partition index too large"))?;
            vec![PostRequest::window(
                registered_proof,
                randomness,
                miner_id,
                &vanilla,
                k,
            )?]
        }
    };
    out.deliver(&e, requests.into_iter().map(ProofRequest::Post).collect())
}

#[allow(clippy::too_many_arguments)]
unsafe fn snap(
    e: *const CuzkEngine,
    registered_proof: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    comm_r_old: CuzkSlice,
    comm_r_new: CuzkSlice,
    comm_d_new: CuzkSlice,
    out: Output,
) -> Result<(), FfiError> {
    let e = engine_or_default(e, &out)?;
    out.check()?;
    let vanilla = slices(vanilla, n_vanilla, "vanilla")?;
    let request = SnapDealsRequest::parse(
        registered_proof,
        &vanilla,
        bytes(comm_r_old.ptr, comm_r_old.len, "comm_r_old")?,
        bytes(comm_r_new.ptr, comm_r_new.len, "comm_r_new")?,
        bytes(comm_d_new.ptr, comm_d_new.len, "comm_d_new")?,
    )?;
    out.deliver(&e, vec![ProofRequest::SnapDeals(request)])
}

/// Queues a PoRep C2 job. `c1_json` (the C1 output) is borrowed for the call.
/// `registered_proof` is the `abi.RegisteredSealProof` number, or `CUZK_REGISTERED_FROM_C1` to
/// take it from the C1 output (as filecoin-ffi's `SealCommitPhase2`). On success `*job_out`
/// is the job.
///
/// # Safety
/// Pointers valid for their lengths; `job_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_porep(
    e: *const CuzkEngine,
    c1_json: *const u8,
    c1_len: usize,
    registered_proof: u64,
    sector_number: u64,
    miner_id: u64,
    job_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let out = Output::Job(job_out);
        porep(
            e,
            c1_json,
            c1_len,
            registered_proof,
            sector_number,
            Some(miner_id),
            out,
        )
    })
}

/// Proves a PoRep C2 and waits: `cuzk_submit_porep` + `cuzk_await`. A null `e` uses the
/// process-wide default engine. On success `*proof_out` owns the proof (free with
/// `cuzk_bytes_free`).
///
/// # Safety
/// `e` null or an engine handle (closed ones are refused); pointers valid for their lengths; `proof_out` writable; `err`
/// null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove_porep(
    e: *const CuzkEngine,
    c1_json: *const u8,
    c1_len: usize,
    registered_proof: u64,
    sector_number: u64,
    miner_id: u64,
    proof_out: *mut CuzkBytes,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let out = Output::Proof(proof_out);
        porep(
            e,
            c1_json,
            c1_len,
            registered_proof,
            sector_number,
            Some(miner_id),
            out,
        )
    })
}

/// Queues the circuit proofs of a PoRep C2 (filecoin-ffi's `SealCommitPhase2CircuitProofs`):
/// the partition proofs, made without a miner id, for `cuzk_aggregate_seal_proofs`. For a
/// non-interactive PoRep they are not aggregated. The registered proof comes from the C1
/// output; each partition is checked against the verifying key before the job completes.
///
/// # Safety
/// Pointers valid for their lengths; `job_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_porep_circuit_proofs(
    e: *const CuzkEngine,
    c1_json: *const u8,
    c1_len: usize,
    sector_number: u64,
    job_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let out = Output::Job(job_out);
        let reg = CUZK_REGISTERED_FROM_C1;
        porep(e, c1_json, c1_len, reg, sector_number, None, out)
    })
}

/// Proves the circuit proofs of a PoRep C2 and waits (null `e`: the default engine); see
/// `cuzk_submit_porep_circuit_proofs`. `*proof_out` owns the proofs (free with
/// `cuzk_bytes_free`).
///
/// # Safety
/// As `cuzk_submit_porep_circuit_proofs`, with `proof_out` writable instead of `job_out`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove_porep_circuit_proofs(
    e: *const CuzkEngine,
    c1_json: *const u8,
    c1_len: usize,
    sector_number: u64,
    proof_out: *mut CuzkBytes,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let out = Output::Proof(proof_out);
        let reg = CUZK_REGISTERED_FROM_C1;
        porep(e, c1_json, c1_len, reg, sector_number, None, out)
    })
}

/// Queues a WinningPoSt job (`registered_proof` 0-4). `randomness` (32 bytes) and the
/// `n_vanilla` vanilla proofs (bincode `FallbackPoStSectorProof`) are borrowed for the call.
///
/// # Safety
/// Pointers valid for their lengths; `job_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_winning_post(
    e: *const CuzkEngine,
    registered_proof: u64,
    randomness: *const u8,
    randomness_len: usize,
    miner_id: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    job_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let out = Output::Job(job_out);
        let (r, rl) = (randomness, randomness_len);
        post(
            e,
            registered_proof,
            r,
            rl,
            miner_id,
            vanilla,
            n_vanilla,
            None,
            out,
        )
    })
}

/// Proves a WinningPoSt and waits (null `e`: the default engine); `*proof_out` owns the proof.
///
/// # Safety
/// As `cuzk_submit_winning_post`, with `proof_out` writable instead of `job_out`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove_winning_post(
    e: *const CuzkEngine,
    registered_proof: u64,
    randomness: *const u8,
    randomness_len: usize,
    miner_id: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    proof_out: *mut CuzkBytes,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let out = Output::Proof(proof_out);
        let (r, rl) = (randomness, randomness_len);
        post(
            e,
            registered_proof,
            r,
            rl,
            miner_id,
            vanilla,
            n_vanilla,
            None,
            out,
        )
    })
}

/// Queues one WindowPoSt partition (`registered_proof` 5-14; `partition_index` below 3000, the
/// most partitions a deadline has). Inputs borrowed as for `cuzk_submit_winning_post`.
///
/// # Safety
/// Pointers valid for their lengths; `job_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_window_post(
    e: *const CuzkEngine,
    registered_proof: u64,
    randomness: *const u8,
    randomness_len: usize,
    miner_id: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    partition_index: u64,
    job_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        if partition_index == CUZK_ALL_PARTITIONS {
            return Err(invalid(
                "a job is one partition: use cuzk_prove_window_post for all partitions",
            ));
        }
        let out = Output::Job(job_out);
        let (r, rl, k) = (randomness, randomness_len, Some(partition_index));
        post(
            e,
            registered_proof,
            r,
            rl,
            miner_id,
            vanilla,
            n_vanilla,
            k,
            out,
        )
    })
}

/// Proves a WindowPoSt and waits (null `e`: the default engine). With `partition_index` =
/// `CUZK_ALL_PARTITIONS` the vanilla proofs of all sectors (in sector-id order) are cut into
/// partitions and `*proof_out` is the merged proof (filecoin-ffi's
/// `GenerateWindowPoStWithVanilla`); otherwise it is one partition's proof
/// (`GenerateSinglePartitionWindowPoStWithVanilla`).
///
/// # Safety
/// As `cuzk_submit_window_post`, with `proof_out` writable instead of `job_out`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove_window_post(
    e: *const CuzkEngine,
    registered_proof: u64,
    randomness: *const u8,
    randomness_len: usize,
    miner_id: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    partition_index: u64,
    proof_out: *mut CuzkBytes,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let out = Output::Proof(proof_out);
        let (r, rl, k) = (randomness, randomness_len, Some(partition_index));
        post(
            e,
            registered_proof,
            r,
            rl,
            miner_id,
            vanilla,
            n_vanilla,
            k,
            out,
        )
    })
}

/// Queues a SnapDeals update proof (`registered_proof` 0-4): one vanilla proof per partition
/// (bincode `PartitionProof`) and three 32-byte commitments, all borrowed for the call.
///
/// # Safety
/// Pointers valid for their lengths; `job_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_snap_deals(
    e: *const CuzkEngine,
    registered_proof: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    comm_r_old: CuzkSlice,
    comm_r_new: CuzkSlice,
    comm_d_new: CuzkSlice,
    job_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let out = Output::Job(job_out);
        let (v, n) = (vanilla, n_vanilla);
        snap(
            e,
            registered_proof,
            v,
            n,
            comm_r_old,
            comm_r_new,
            comm_d_new,
            out,
        )
    })
}

/// Proves a SnapDeals update and waits (null `e`: the default engine); `*proof_out` owns the
/// proof (filecoin-ffi's `GenerateUpdateProofWithVanilla`).
///
/// # Safety
/// As `cuzk_submit_snap_deals`, with `proof_out` writable instead of `job_out`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove_snap_deals(
    e: *const CuzkEngine,
    registered_proof: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    comm_r_old: CuzkSlice,
    comm_r_new: CuzkSlice,
    comm_d_new: CuzkSlice,
    proof_out: *mut CuzkBytes,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let out = Output::Proof(proof_out);
        let (v, n) = (vanilla, n_vanilla);
        snap(
            e,
            registered_proof,
            v,
            n,
            comm_r_old,
            comm_r_new,
            comm_d_new,
            out,
        )
    })
}
