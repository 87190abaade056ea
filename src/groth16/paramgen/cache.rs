//! Writing generated parameters where filecoin-proofs looks for them.
//!
//! filecoin-proofs reads `v28-<cache id>.params`, `.vk` and `.meta` from
//! `FIL_PROOFS_PARAMETER_CACHE` (default `/var/tmp/filecoin-proof-parameters/`); we write the
//! same names in the same formats, so real downloaded parameters and ours are interchangeable.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use bellperson::groth16::Parameters;
use blstrs::Bls12;
use storage_proofs_core::parameter_cache::{
    metadata_id, parameter_cache_dir, parameter_id, verifying_key_id, CacheEntryMetadata,
};

use crate::groth16::error::{Groth16Error, Result};

/// The directory filecoin-proofs reads parameters from in this process.
pub fn cache_dir() -> PathBuf {
    parameter_cache_dir()
}

/// Path of the `.params` file for a cache id (e.g. `stacked-proof-of-replication-...`).
pub fn params_path(dir: &Path, cache_id: &str) -> PathBuf {
    dir.join(parameter_id(cache_id))
}

/// Path of the `.vk` file for a cache id.
pub fn vk_path(dir: &Path, cache_id: &str) -> PathBuf {
    dir.join(verifying_key_id(cache_id))
}

/// Path of the `.meta` file for a cache id.
pub fn meta_path(dir: &Path, cache_id: &str) -> PathBuf {
    dir.join(metadata_id(cache_id))
}

/// Writes `contents` to `path` through a temporary file and a rename, so a reader never sees
/// a half-written file.
fn write_atomically(
    path: &Path,
    contents: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let io = |source| Groth16Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let result = (|| {
        let mut out = BufWriter::with_capacity(1 << 22, std::fs::File::create(&tmp)?);
        contents(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// Writes `.params`, `.vk` and `.meta` for `cache_id` into `dir`.
pub fn write_params(
    dir: &Path,
    cache_id: &str,
    params: &Parameters<Bls12>,
    meta: &CacheEntryMetadata,
) -> Result<()> {
    write_atomically(&params_path(dir, cache_id), |w| params.write(w))?;
    write_atomically(&vk_path(dir, cache_id), |w| params.vk.write(w))?;
    write_atomically(&meta_path(dir, cache_id), |w| {
        serde_json::to_writer(&mut *w, meta).map_err(std::io::Error::other)
    })
}

/// Whether all three files for `cache_id` exist in `dir`.
pub fn is_cached(dir: &Path, cache_id: &str) -> bool {
    params_path(dir, cache_id).is_file()
        && vk_path(dir, cache_id).is_file()
        && meta_path(dir, cache_id).is_file()
}
