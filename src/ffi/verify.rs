//! Verification over the C ABI: filecoin-proofs' verifiers, from filecoin-ffi's inputs.
//! All inputs are borrowed for the call; `*valid` receives the verdict.

use std::ffi::c_char;

use super::guard::{array, bytes, call, non_null, FfiError};
use super::types::{CuzkCode, CuzkSlice};
use crate::proofs::verify;

/// A challenged sector for PoSt verification.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CuzkSectorInfo {
    /// `abi.RegisteredPoStProof` number the sector is checked with (filecoin-ffi: the
    /// sector's seal proof's WinningPoSt type, or for WindowPoSt the first proof's type).
    pub registered_proof: u64,
    /// Sector number.
    pub sector_number: u64,
    /// Replica commitment (32 bytes).
    pub comm_r: CuzkSlice,
}

/// A PoSt proof with its type, as in go-state-types' `proof.PoStProof`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CuzkPoStProof {
    /// `abi.RegisteredPoStProof` number.
    pub registered_proof: u64,
    /// Proof bytes.
    pub proof: CuzkSlice,
}

unsafe fn slice<'a>(s: CuzkSlice, what: &str) -> Result<&'a [u8], FfiError> {
    bytes(s.ptr, s.len, what)
}

unsafe fn sectors(
    p: *const CuzkSectorInfo,
    n: usize,
) -> Result<Vec<verify::ChallengedSector>, FfiError> {
    array(p, n, "sectors")?
        .iter()
        .map(|s| {
            Ok(verify::ChallengedSector {
                registered: s.registered_proof,
                number: s.sector_number,
                comm_r: slice(s.comm_r, "comm_r")?.to_vec(),
            })
        })
        .collect()
}

unsafe fn post_proofs(p: *const CuzkPoStProof, n: usize) -> Result<Vec<(u64, Vec<u8>)>, FfiError> {
    array(p, n, "proofs")?
        .iter()
        .map(|x| Ok((x.registered_proof, slice(x.proof, "proof")?.to_vec())))
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

/// Which PoSt verifier to run.
type PostVerifier = fn(
    &[u8],
    u64,
    &[verify::ChallengedSector],
    &[(u64, Vec<u8>)],
) -> crate::proofs::ProofResult<bool>;

#[allow(clippy::too_many_arguments)]
unsafe fn verify_post(
    verifier: PostVerifier,
    randomness: CuzkSlice,
    miner_id: u64,
    sectors_ptr: *const CuzkSectorInfo,
    n_sectors: usize,
    proofs_ptr: *const CuzkPoStProof,
    n_proofs: usize,
    valid: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(valid, "valid")?;
        let sectors = sectors(sectors_ptr, n_sectors)?;
        let proofs = post_proofs(proofs_ptr, n_proofs)?;
        answer(
            valid,
            verifier(
                slice(randomness, "randomness")?,
                miner_id,
                &sectors,
                &proofs,
            ),
        )
    })
}

/// Verifies a WinningPoSt as filecoin-ffi's `VerifyWinningPoSt`: the `n_proofs` proofs'
/// bytes concatenated, over `n_sectors` challenged sectors, each with its own proof type.
///
/// # Safety
/// Pointers valid for their lengths; `valid` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_winning_post(
    randomness: CuzkSlice,
    miner_id: u64,
    sectors_ptr: *const CuzkSectorInfo,
    n_sectors: usize,
    proofs_ptr: *const CuzkPoStProof,
    n_proofs: usize,
    valid: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    verify_post(
        verify::verify_winning_post,
        randomness,
        miner_id,
        sectors_ptr,
        n_sectors,
        proofs_ptr,
        n_proofs,
        valid,
        err,
    )
}

/// Verifies a WindowPoSt as filecoin-ffi's `VerifyWindowPoSt`: every proof entry goes to
/// filecoin-proofs-api, which accepts exactly one (the partition proofs concatenated).
///
/// # Safety
/// Pointers valid for their lengths; `valid` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_window_post(
    randomness: CuzkSlice,
    miner_id: u64,
    sectors_ptr: *const CuzkSectorInfo,
    n_sectors: usize,
    proofs_ptr: *const CuzkPoStProof,
    n_proofs: usize,
    valid: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    verify_post(
        verify::verify_window_post,
        randomness,
        miner_id,
        sectors_ptr,
        n_sectors,
        proofs_ptr,
        n_proofs,
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
