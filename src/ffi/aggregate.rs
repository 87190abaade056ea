//! SnarkPack aggregation of seal proofs over the C ABI (filecoin-ffi's `AggregateSealProofs`
//! and `VerifyAggregateSeals`). Inputs are borrowed for the call.

use std::ffi::c_char;

use super::guard::{array, bytes, call, non_null, slices, FfiError};
use super::types::{CuzkBytes, CuzkCode, CuzkSlice};
use crate::proofs::aggregate::{self, AggregationInput};

/// One aggregated sector's public values (filecoin-ffi's `AggregationInputs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CuzkAggregationInput {
    /// Sector number.
    pub sector_number: u64,
    /// Replica commitment (32 bytes).
    pub comm_r: CuzkSlice,
    /// Data commitment (32 bytes).
    pub comm_d: CuzkSlice,
    /// Sealing ticket (32 bytes).
    pub ticket: CuzkSlice,
    /// Interactive seed (32 bytes).
    pub seed: CuzkSlice,
}

/// Aggregates `n` seal proofs (each the circuit proofs of one sector's C2, e.g. from
/// `cuzk_prove_porep_circuit_proofs`) with their sectors' `comm_rs` and `seeds` (32 bytes
/// each, same order) into one SnarkPack proof. `registered_proof` is the
/// `abi.RegisteredSealProof`, `aggregation` the `abi.RegisteredAggregationProof` number (0
/// SnarkPackV1, 1 SnarkPackV2). Reads the inner-product SRS from the parameter cache. On
/// success `*proof_out` owns the aggregate (free with `cuzk_bytes_free`).
///
/// # Safety
/// Arrays valid for `n` entries, their slices for their lengths; `proof_out` writable; `err`
/// null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_aggregate_seal_proofs(
    registered_proof: u64,
    aggregation: u64,
    comm_rs: *const CuzkSlice,
    seeds: *const CuzkSlice,
    proofs: *const CuzkSlice,
    n: usize,
    proof_out: *mut CuzkBytes,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(proof_out, "proof_out")?;
        *proof_out = CuzkBytes::empty();
        let aggregate = aggregate::aggregate_seal_proofs(
            registered_proof,
            aggregation,
            &slices(comm_rs, n, "comm_rs")?,
            &slices(seeds, n, "seeds")?,
            &slices(proofs, n, "proofs")?,
        )?;
        *proof_out = CuzkBytes::from_vec(aggregate);
        Ok(())
    })
}

/// Verifies a SnarkPack aggregate of seal proofs over `n` sectors' public values, as
/// filecoin-ffi's `VerifyAggregateSeals`; `*valid` receives the verdict.
///
/// # Safety
/// `inputs` valid for `n` entries, all slices for their lengths; `valid` writable; `err` null
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_aggregate_seal_proofs(
    registered_proof: u64,
    aggregation: u64,
    miner_id: u64,
    proof: CuzkSlice,
    inputs: *const CuzkAggregationInput,
    n: usize,
    valid: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(valid, "valid")?;
        let field = |s: CuzkSlice, what: &str| bytes(s.ptr, s.len, what).map(<[u8]>::to_vec);
        let inputs = array(inputs, n, "inputs")?
            .iter()
            .map(|i| {
                Ok(AggregationInput {
                    sector: i.sector_number,
                    comm_r: field(i.comm_r, "comm_r")?,
                    comm_d: field(i.comm_d, "comm_d")?,
                    ticket: field(i.ticket, "ticket")?,
                    seed: field(i.seed, "seed")?,
                })
            })
            .collect::<Result<Vec<_>, FfiError>>()?;
        *valid = aggregate::verify_aggregate_seal_proofs(
            registered_proof,
            aggregation,
            miner_id,
            bytes(proof.ptr, proof.len, "proof")?,
            &inputs,
        )?;
        Ok(())
    })
}
