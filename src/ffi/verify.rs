//! Verification over the C ABI: filecoin-proofs' verifiers, from filecoin-ffi's inputs.
//! All inputs are borrowed for the call; `*valid` receives the verdict.

use std::ffi::c_char;

use super::guard::{bytes, call, non_null, FfiError};
use super::types::{CuzkCode, CuzkSlice};
use crate::proofs::verify;

/// A challenged sector for PoSt verification.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CuzkSectorInfo {
    /// Sector number.
    pub sector_number: u64,
    /// Replica commitment (32 bytes).
    pub comm_r: CuzkSlice,
}

unsafe fn slice<'a>(s: CuzkSlice, what: &str) -> Result<&'a [u8], FfiError> {
    bytes(s.ptr, s.len, what)
}

unsafe fn sectors(p: *const CuzkSectorInfo, n: usize) -> Result<Vec<(u64, Vec<u8>)>, FfiError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    non_null(p, "sectors")?;
    std::slice::from_raw_parts(p, n)
        .iter()
        .map(|s| Ok((s.sector_number, slice(s.comm_r, "comm_r")?.to_vec())))
        .collect()
}

unsafe fn answer(
    valid: *mut bool,
    verdict: Result<bool, crate::proofs::ProofError>,
) -> Result<(), FfiError> {
    *valid = verdict?;
    Ok(())
}

/// Verifies a PoRep proof (`abi.RegisteredSealProof` number).
///
/// # Safety
/// Slices valid for their lengths; `valid` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_seal(
    registered_proof: u64,
    comm_r: CuzkSlice,
    comm_d: CuzkSlice,
    miner_id: u64,
    sector_number: u64,
    ticket: CuzkSlice,
    seed: CuzkSlice,
    proof: CuzkSlice,
    valid: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(valid, "valid")?;
        answer(
            valid,
            verify::verify_seal(
                registered_proof,
                slice(comm_r, "comm_r")?,
                slice(comm_d, "comm_d")?,
                miner_id,
                sector_number,
                slice(ticket, "ticket")?,
                slice(seed, "seed")?,
                slice(proof, "proof")?,
            ),
        )
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn verify_post(
    kind: verify::PostKind,
    registered_proof: u64,
    randomness: CuzkSlice,
    miner_id: u64,
    sectors_ptr: *const CuzkSectorInfo,
    n_sectors: usize,
    proof: CuzkSlice,
    valid: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(valid, "valid")?;
        let sectors = sectors(sectors_ptr, n_sectors)?;
        answer(
            valid,
            verify::verify_post(
                kind,
                registered_proof,
                slice(randomness, "randomness")?,
                miner_id,
                &sectors,
                slice(proof, "proof")?,
            ),
        )
    })
}

/// Verifies a WinningPoSt proof over `n_sectors` challenged sectors.
///
/// # Safety
/// Pointers valid for their lengths; `valid` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_winning_post(
    registered_proof: u64,
    randomness: CuzkSlice,
    miner_id: u64,
    sectors_ptr: *const CuzkSectorInfo,
    n_sectors: usize,
    proof: CuzkSlice,
    valid: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    verify_post(
        verify::PostKind::Winning,
        registered_proof,
        randomness,
        miner_id,
        sectors_ptr,
        n_sectors,
        proof,
        valid,
        err,
    )
}

/// Verifies a WindowPoSt proof (partition proofs concatenated) over `n_sectors` sectors.
///
/// # Safety
/// Pointers valid for their lengths; `valid` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_window_post(
    registered_proof: u64,
    randomness: CuzkSlice,
    miner_id: u64,
    sectors_ptr: *const CuzkSectorInfo,
    n_sectors: usize,
    proof: CuzkSlice,
    valid: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    verify_post(
        verify::PostKind::Window,
        registered_proof,
        randomness,
        miner_id,
        sectors_ptr,
        n_sectors,
        proof,
        valid,
        err,
    )
}

/// Verifies a SnapDeals update proof (`abi.RegisteredUpdateProof` number).
///
/// # Safety
/// Slices valid for their lengths; `valid` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_update(
    registered_proof: u64,
    comm_r_old: CuzkSlice,
    comm_r_new: CuzkSlice,
    comm_d_new: CuzkSlice,
    proof: CuzkSlice,
    valid: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(valid, "valid")?;
        answer(
            valid,
            verify::verify_update(
                registered_proof,
                slice(comm_r_old, "comm_r_old")?,
                slice(comm_r_new, "comm_r_new")?,
                slice(comm_d_new, "comm_d_new")?,
                slice(proof, "proof")?,
            ),
        )
    })
}
