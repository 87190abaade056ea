//! Sector challenges and vanilla proofs over the C ABI (filecoin-ffi's
//! `GenerateWinningPoStSectorChallenge`, `GeneratePoStFallbackSectorChallenges`,
//! `GenerateSingleVanillaProof`, `GenerateUpdateVanillaProofs` ...): these read sector files
//! through filecoin-proofs; the SNARKs over their output are proved by the engine
//! (`cuzk_prove_*`). No engine is needed. Paths are UTF-8 bytes, borrowed for the call.

use std::ffi::c_char;
use std::path::PathBuf;

use super::guard::{array, bytes, call, non_null, FfiError};
use super::types::{CuzkBytes, CuzkCode, CuzkSlice};
use crate::proofs::vanilla::{self, Replica, UpdatePaths};

/// An owned list of u64 returned by cuzk; release it with `cuzk_u64s_free`.
#[repr(C)]
#[derive(Debug)]
pub struct CuzkU64s {
    /// First element (null when empty).
    pub ptr: *mut u64,
    /// Number of elements.
    pub len: usize,
}

impl CuzkU64s {
    fn from_vec(v: Vec<u64>) -> Self {
        if v.is_empty() {
            return Self::empty();
        }
        let boxed = v.into_boxed_slice();
        let len = boxed.len();
        super::memory::handed_out();
        let ptr = Box::into_raw(boxed).cast::<u64>();
        Self { ptr, len }
    }

    fn empty() -> Self {
        Self {
            ptr: std::ptr::null_mut(),
            len: 0,
        }
    }
}

/// An owned list of byte buffers returned by cuzk; release it with `cuzk_bytes_list_free`.
#[repr(C)]
#[derive(Debug)]
pub struct CuzkBytesList {
    /// First buffer (null when empty).
    pub ptr: *mut CuzkBytes,
    /// Number of buffers.
    pub len: usize,
}

impl CuzkBytesList {
    fn from_vecs(v: Vec<Vec<u8>>) -> Self {
        if v.is_empty() {
            return Self::empty();
        }
        let boxed: Box<[CuzkBytes]> = v.into_iter().map(CuzkBytes::from_vec).collect();
        let len = boxed.len();
        super::memory::handed_out();
        let ptr = Box::into_raw(boxed).cast::<CuzkBytes>();
        Self { ptr, len }
    }

    fn empty() -> Self {
        Self {
            ptr: std::ptr::null_mut(),
            len: 0,
        }
    }
}

/// Per-sector PoSt challenges returned by `cuzk_fallback_sector_challenges`; release with
/// `cuzk_sector_challenges_free`. Sector `sectors.ptr[i]`'s challenges are
/// `challenges.ptr[i * per_sector .. (i + 1) * per_sector]`.
#[repr(C)]
#[derive(Debug)]
pub struct CuzkSectorChallenges {
    /// Sector numbers, ascending, each once.
    pub sectors: CuzkU64s,
    /// Every sector's challenges, flattened in sector order.
    pub challenges: CuzkU64s,
    /// Challenges per sector (the proof type's challenge count).
    pub per_sector: usize,
}

unsafe fn slice<'a>(s: CuzkSlice, what: &str) -> Result<&'a [u8], FfiError> {
    bytes(s.ptr, s.len, what)
}

unsafe fn u64s<'a>(p: *const u64, n: usize, what: &str) -> Result<&'a [u64], FfiError> {
    array(p, n, what)
}

unsafe fn path(s: CuzkSlice, what: &str) -> Result<PathBuf, FfiError> {
    let b = slice(s, what)?;
    let text = std::str::from_utf8(b)
        .map_err(|e| FfiError::new(CuzkCode::InvalidInput, format!("{what} is not UTF-8: {e}")))?;
    if text.contains('\0') {
        return Err(FfiError::new(
            CuzkCode::InvalidInput,
            format!("{what} contains a NUL byte"),
        ));
    }
    Ok(PathBuf::from(text))
}

/// filecoin-ffi's `GenerateWinningPoStSectorChallenge`: the indices (into the caller's sorted
/// eligible sectors, `0..eligible_sectors`) that a WinningPoSt (`registered_proof` 0-4)
/// challenges. `randomness` is 32 bytes. On success `*out` owns the indices (free with
/// `cuzk_u64s_free`).
///
/// # Safety
/// `randomness` valid for its length; `out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_winning_post_sector_challenge(
    registered_proof: u64,
    randomness: CuzkSlice,
    miner_id: u64,
    eligible_sectors: u64,
    out: *mut CuzkU64s,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(out, "out")?;
        *out = CuzkU64s::empty();
        let v = vanilla::winning_post_sector_challenge(
            registered_proof,
            slice(randomness, "randomness")?,
            miner_id,
            eligible_sectors,
        )?;
        *out = CuzkU64s::from_vec(v);
        Ok(())
    })
}

/// filecoin-ffi's `GeneratePoStFallbackSectorChallenges`: the leaf challenges of each of the
/// `n_sectors` sectors (WinningPoSt or WindowPoSt, `registered_proof` 0-14). A sector's
/// challenges depend on its position in `sector_ids`: pass them in proving order (ascending).
/// At most a deadline's sectors: the type's sectors per partition times 3000. On success
/// `*out` owns the result (free with `cuzk_sector_challenges_free`).
///
/// # Safety
/// `sector_ids` points to `n_sectors` u64; `randomness` valid; `out` writable; `err` null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_fallback_sector_challenges(
    registered_proof: u64,
    randomness: CuzkSlice,
    miner_id: u64,
    sector_ids: *const u64,
    n_sectors: usize,
    out: *mut CuzkSectorChallenges,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(out, "out")?;
        *out = CuzkSectorChallenges {
            sectors: CuzkU64s::empty(),
            challenges: CuzkU64s::empty(),
            per_sector: 0,
        };
        let c = vanilla::fallback_sector_challenges(
            registered_proof,
            slice(randomness, "randomness")?,
            miner_id,
            u64s(sector_ids, n_sectors, "sector_ids")?,
        )?;
        let per_sector = c.challenges.first().map_or(0, Vec::len);
        if c.challenges.iter().any(|v| v.len() != per_sector) {
            return Err(FfiError::new(
                CuzkCode::ProofFailed,
                "filecoin-proofs returned uneven challenge counts",
            ));
        }
        *out = CuzkSectorChallenges {
            sectors: CuzkU64s::from_vec(c.sectors),
            challenges: CuzkU64s::from_vec(c.challenges.concat()),
            per_sector,
        };
        Ok(())
    })
}

/// filecoin-ffi's `GenerateSingleVanillaProof`: one sector's PoSt vanilla proof (bincode
/// `FallbackPoStSectorProof`) for `n_challenges` challenges, read from the sealed replica
/// `replica_path` and its cache directory `cache_dir` (UTF-8 paths). `registered_proof` is the
/// sector's `abi.RegisteredPoStProof`, `comm_r` 32 bytes. A sector whose files are missing,
/// unreadable or inconsistent with `comm_r` fails with `CUZK_PROOF_FAILED` (a faulty sector).
/// On success `*proof_out` owns the proof (free with `cuzk_bytes_free`).
///
/// # Safety
/// Slices valid for their lengths; `challenges` points to `n_challenges` u64; `proof_out`
/// writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_single_vanilla_proof(
    registered_proof: u64,
    sector_number: u64,
    comm_r: CuzkSlice,
    cache_dir: CuzkSlice,
    replica_path: CuzkSlice,
    challenges: *const u64,
    n_challenges: usize,
    proof_out: *mut CuzkBytes,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(proof_out, "proof_out")?;
        *proof_out = CuzkBytes::empty();
        let replica = Replica {
            registered: registered_proof,
            sector: sector_number,
            comm_r: slice(comm_r, "comm_r")?.to_vec(),
            cache_dir: path(cache_dir, "cache_dir")?,
            replica_path: path(replica_path, "replica_path")?,
        };
        let challenges = u64s(challenges, n_challenges, "challenges")?;
        let proof = vanilla::single_vanilla_proof(&replica, challenges)?;
        *proof_out = CuzkBytes::from_vec(proof);
        Ok(())
    })
}

/// filecoin-ffi's `GenerateUpdateVanillaProofs`: a SnapDeals update's vanilla proofs, one per
/// partition (bincode `PartitionProof`), read from the updated replica and cache and the
/// original sealed replica (sector key) and cache. `registered_proof` 0-4; commitments 32
/// bytes each. On success `*proofs_out` owns the proofs (free with `cuzk_bytes_list_free`).
///
/// # Safety
/// Slices valid for their lengths; `proofs_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_update_vanilla_proofs(
    registered_proof: u64,
    comm_r_old: CuzkSlice,
    comm_r_new: CuzkSlice,
    comm_d_new: CuzkSlice,
    new_replica_path: CuzkSlice,
    new_replica_cache_path: CuzkSlice,
    sector_key_path: CuzkSlice,
    sector_key_cache_path: CuzkSlice,
    proofs_out: *mut CuzkBytesList,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(proofs_out, "proofs_out")?;
        *proofs_out = CuzkBytesList::empty();
        let paths = UpdatePaths {
            new_replica: path(new_replica_path, "new_replica_path")?,
            new_replica_cache: path(new_replica_cache_path, "new_replica_cache_path")?,
            sector_key: path(sector_key_path, "sector_key_path")?,
            sector_key_cache: path(sector_key_cache_path, "sector_key_cache_path")?,
        };
        let proofs = vanilla::update_vanilla_proofs(
            registered_proof,
            slice(comm_r_old, "comm_r_old")?,
            slice(comm_r_new, "comm_r_new")?,
            slice(comm_d_new, "comm_d_new")?,
            &paths,
        )?;
        *proofs_out = CuzkBytesList::from_vecs(proofs);
        Ok(())
    })
}

/// filecoin-ffi's `GetNumPartitionForFallbackPost`: the partitions of a WindowPoSt
/// (`registered_proof` 5-14) over `num_sectors` sectors, written to `*partitions_out`.
///
/// # Safety
/// `partitions_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_num_partitions_for_fallback_post(
    registered_proof: u64,
    num_sectors: u64,
    partitions_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(partitions_out, "partitions_out")?;
        *partitions_out = vanilla::num_partitions_for_fallback_post(registered_proof, num_sectors)?;
        Ok(())
    })
}

unsafe fn version(
    out: *mut *mut c_char,
    f: impl FnOnce() -> Result<String, crate::proofs::ProofError>,
) -> Result<(), FfiError> {
    non_null(out, "version_out")?;
    *out = std::ptr::null_mut();
    let v = f()?;
    *out = super::memory::owned_string(&v);
    Ok(())
}

/// filecoin-ffi's `GetSealVersion`: the name of an `abi.RegisteredSealProof` (e.g.
/// "StackedDrg32GiBV1_1"). On success `*version_out` owns the string (free with
/// `cuzk_string_free`).
///
/// # Safety
/// `version_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_seal_version(
    registered_proof: u64,
    version_out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        version(version_out, || vanilla::seal_version(registered_proof))
    })
}

/// filecoin-ffi's `GetPoStVersion`: the proofs-api name of an `abi.RegisteredPoStProof` (on
/// chain WindowPoSt V1_1 is proofs-api "..V1_2", as in filecoin-ffi). `*version_out` as for
/// `cuzk_seal_version`.
///
/// # Safety
/// `version_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_post_version(
    registered_proof: u64,
    version_out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        version(version_out, || vanilla::post_version(registered_proof))
    })
}

/// Frees a u64 list returned by cuzk and resets it to empty. Null is ignored.
///
/// # Safety
/// `l` null or a list from cuzk, freed once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_u64s_free(l: *mut CuzkU64s) {
    if l.is_null() {
        return;
    }
    let list = &mut *l;
    if !list.ptr.is_null() {
        super::memory::taken_back();
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            list.ptr, list.len,
        )));
    }
    *list = CuzkU64s::empty();
}

/// Frees a list of byte buffers returned by cuzk (each buffer and the list) and resets it to
/// empty. Null is ignored.
///
/// # Safety
/// `l` null or a list from cuzk, freed once (its buffers not freed separately).
#[no_mangle]
pub unsafe extern "C" fn cuzk_bytes_list_free(l: *mut CuzkBytesList) {
    if l.is_null() {
        return;
    }
    let list = &mut *l;
    if !list.ptr.is_null() {
        super::memory::taken_back();
        let mut items = Box::from_raw(std::ptr::slice_from_raw_parts_mut(list.ptr, list.len));
        for b in items.iter_mut() {
            super::memory::cuzk_bytes_free(b);
        }
    }
    *list = CuzkBytesList::empty();
}

/// Frees challenges returned by `cuzk_fallback_sector_challenges` and resets them to empty.
/// Null is ignored.
///
/// # Safety
/// `c` null or challenges from cuzk, freed once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_sector_challenges_free(c: *mut CuzkSectorChallenges) {
    if c.is_null() {
        return;
    }
    let c = &mut *c;
    cuzk_u64s_free(&mut c.sectors);
    cuzk_u64s_free(&mut c.challenges);
    c.per_sector = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(b: &[u8]) -> CuzkSlice {
        CuzkSlice {
            ptr: b.as_ptr(),
            len: b.len(),
        }
    }

    fn take(err: *mut c_char) -> String {
        assert!(!err.is_null());
        let m = unsafe { std::ffi::CStr::from_ptr(err) }
            .to_string_lossy()
            .into_owned();
        unsafe { super::super::memory::cuzk_string_free(err) };
        m
    }

    #[test]
    fn challenges_round_trip_and_free() {
        let r = [7u8; 32];
        let ids = [2u64, 1];
        let mut out = CuzkSectorChallenges {
            sectors: CuzkU64s::empty(),
            challenges: CuzkU64s::empty(),
            per_sector: 0,
        };
        let mut err = std::ptr::null_mut();
        let code = unsafe {
            cuzk_fallback_sector_challenges(10, s(&r), 1000, ids.as_ptr(), 2, &mut out, &mut err)
        };
        assert_eq!(code, CuzkCode::Ok);
        assert_eq!(out.per_sector, 10);
        let sectors = unsafe { std::slice::from_raw_parts(out.sectors.ptr, out.sectors.len) };
        assert_eq!(sectors, [1, 2]);
        assert_eq!(out.challenges.len, 20);
        unsafe { cuzk_sector_challenges_free(&mut out) };
        assert!(out.sectors.ptr.is_null() && out.challenges.len == 0);

        let mut win = CuzkU64s::empty();
        let code =
            unsafe { cuzk_winning_post_sector_challenge(0, s(&r), 1000, 5, &mut win, &mut err) };
        assert_eq!(code, CuzkCode::Ok);
        assert_eq!(win.len, 1);
        unsafe { cuzk_u64s_free(&mut win) };
    }

    #[test]
    fn bad_input_is_invalid_input_with_a_message() {
        let r = [7u8; 32];
        let mut err = std::ptr::null_mut();
        let mut out = CuzkBytes::empty();
        let bad_path = [0xffu8, 0xfe];
        let code = unsafe {
            cuzk_single_vanilla_proof(
                10,
                1,
                s(&r),
                s(&bad_path),
                s(b"/nonexistent"),
                [0u64].as_ptr(),
                1,
                &mut out,
                &mut err,
            )
        };
        assert_eq!(code, CuzkCode::InvalidInput);
        assert!(take(err).contains("cache_dir is not UTF-8"));

        let code = unsafe {
            cuzk_single_vanilla_proof(
                10,
                1,
                s(&r),
                s(b"/nonexistent"),
                s(b"/nonexistent/sealed"),
                [0u64].as_ptr(),
                1,
                &mut out,
                &mut err,
            )
        };
        assert_eq!(code, CuzkCode::ProofFailed);
        assert!(take(err).contains("sector 1"));

        let code = unsafe {
            cuzk_fallback_sector_challenges(
                10,
                s(&r),
                1000,
                std::ptr::null(),
                3,
                std::ptr::null_mut(),
                &mut err,
            )
        };
        assert_eq!(code, CuzkCode::NullArgument);
        take(err);

        let mut list = CuzkBytesList::empty();
        let code = unsafe {
            cuzk_update_vanilla_proofs(
                9,
                s(&r),
                s(&r),
                s(&r),
                s(b"a"),
                s(b"b"),
                s(b"c"),
                s(b"d"),
                &mut list,
                &mut err,
            )
        };
        assert_eq!(code, CuzkCode::InvalidInput);
        take(err);
        unsafe { cuzk_bytes_list_free(&mut list) };

        let mut v = std::ptr::null_mut();
        assert_eq!(
            unsafe { cuzk_post_version(0, &mut v, &mut err) },
            CuzkCode::Ok
        );
        assert_eq!(take(v), "StackedDrgWinning2KiBV1");
    }

    #[test]
    fn bytes_list_frees_every_buffer() {
        let mut l = CuzkBytesList::from_vecs(vec![vec![1, 2], vec![], vec![3]]);
        assert_eq!(l.len, 3);
        unsafe { cuzk_bytes_list_free(&mut l) };
        assert!(l.ptr.is_null() && l.len == 0);
        unsafe { cuzk_bytes_list_free(std::ptr::null_mut()) };
    }
}
