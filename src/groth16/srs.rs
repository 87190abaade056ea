//! The structured reference string (Groth16 proving parameters), decoded once and kept in memory.
//!
//! bellperson's `MappedParameters` re-decodes every query from the file on every proof; an `Srs`
//! decodes a `.params` file once (in parallel) and is then shared by reference between proofs.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use bellperson::groth16::{prepare_verifying_key, Parameters, PreparedVerifyingKey, VerifyingKey};
use blstrs::{Bls12, G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use super::error::{Groth16Error, Result};

const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;

/// Heap bytes of bellperson's `PreparedVerifyingKey` for a key of `inputs` public inputs:
/// five prepared G2 points (68 line coefficients of 288 bytes each), and per input a copy of
/// `ic`, its projective form (144 bytes) and a fixed-window table of 255 affine points (the
/// verifier's multiscalar precomputation). About 24 KB per input: 632 MB for a 32 GiB
/// WindowPoSt key of 25,840 inputs, so it is charged with every parameter set.
pub fn prepared_key_bytes(inputs: usize) -> usize {
    5 * 68 * 288 + inputs * (G1_BYTES + 144 + 255 * G1_BYTES + 24)
}

/// Decoded Groth16 parameters: the verifying key and the five proving queries.
pub struct Srs {
    /// The verifying key (alpha, beta, gamma, delta, ic).
    pub vk: VerifyingKey<Bls12>,
    /// The verifying key prepared for pairing checks.
    pub pvk: PreparedVerifyingKey<Bls12>,
    /// `tau^i * z(tau) / delta` for i in 0..m-1.
    pub h: Vec<G1Affine>,
    /// `(beta*u_j + alpha*v_j + w_j) / delta` for every aux variable.
    pub l: Vec<G1Affine>,
    /// `u_i(tau)`: inputs, then aux variables present in A.
    pub a: Vec<G1Affine>,
    /// `v_i(tau)` in G1: inputs present in B, then aux present in B.
    pub b_g1: Vec<G1Affine>,
    /// `v_i(tau)` in G2: same selection as `b_g1`.
    pub b_g2: Vec<G2Affine>,
    /// The recorded constraint system of the circuit these parameters prove, once built or
    /// loaded (see [`Srs::pce_slot`]): it lives and is evicted with them.
    pce: std::sync::Arc<super::pce::PceSlot>,
    /// Guards ended before the queries' memory is freed, by key (see [`Srs::hold_guard`]).
    guards: std::sync::Mutex<Vec<(usize, HeldGuard)>>,
}

/// Something kept alive with an [`Srs`] for its drop alone (e.g. a driver's registration of a
/// query's memory, undone when it drops).
pub type HeldGuard = Box<dyn Send + Sync>;

impl Drop for Srs {
    /// Ends the held guards first: a registration of a query's memory must be undone while
    /// that memory is still allocated (the fields, the queries among them, drop after this).
    fn drop(&mut self) {
        let guards = self.guards.get_mut().unwrap_or_else(|p| p.into_inner());
        guards.clear();
    }
}

impl std::fmt::Debug for Srs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Srs")
            .field("ic", &self.vk.ic.len())
            .field("h", &self.h.len())
            .field("l", &self.l.len())
            .field("a", &self.a.len())
            .field("b_g1", &self.b_g1.len())
            .field("b_g2", &self.b_g2.len())
            .finish()
    }
}

/// Reads big-endian lengths and point blocks from a byte slice, naming the file in errors.
struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn corrupt(&self, reason: String) -> Groth16Error {
        Groth16Error::CorruptParams {
            path: self.path.to_path_buf(),
            reason,
        }
    }

    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8]> {
        let left = self.bytes.len() - self.offset;
        if len > left {
            return Err(self.corrupt(format!(
                "truncated at byte {}: {what} needs {len} bytes, {left} left",
                self.offset
            )));
        }
        let out = &self.bytes[self.offset..self.offset + len];
        self.offset += len;
        Ok(out)
    }

    fn points<P: Send + Default>(
        &mut self,
        query: &str,
        size: usize,
        decode: impl Fn(&[u8]) -> Option<P> + Sync,
    ) -> Result<Vec<P>> {
        let len_bytes = self.take(4, &format!("length of query {query}"))?;
        let count = u32::from_be_bytes(len_bytes.try_into().expect("4 bytes")) as usize;
        let block = self.take(
            count
                .checked_mul(size)
                .ok_or_else(|| self.corrupt(format!("query {query}: absurd length {count}")))?,
            &format!("query {query} ({count} points)"),
        )?;
        let bad = AtomicBool::new(false);
        let mut points = with_huge_pages(count);
        block
            .par_chunks_exact(size)
            .map(|bytes| {
                decode(bytes).unwrap_or_else(|| {
                    bad.store(true, Ordering::Relaxed);
                    P::default()
                })
            })
            .collect_into_vec(&mut points);
        if bad.load(Ordering::Relaxed) {
            return Err(self.corrupt(format!(
                "query {query}: a point is not on the curve or is at infinity"
            )));
        }
        Ok(points)
    }
}

/// An empty vector with room for `count` items whose memory the kernel backs with 2 MiB pages
/// where transparent huge pages are on for regions that ask (`madvise` mode, the common
/// default). The CPU MSMs read the points of h at random (a bucket's run at a time): with
/// 4 KiB pages nearly every read misses the TLB (h's dense MSM ran 1.14x faster at 2 KiB
/// PoRep's 4M points with huge pages).
fn with_huge_pages<P>(count: usize) -> Vec<P> {
    let points: Vec<P> = Vec::with_capacity(count);
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (points.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (points.as_ptr() as usize + count * std::mem::size_of::<P>()) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside the vector's allocation; MADV_HUGEPAGE only
            // changes how the kernel backs it (an error leaves 4 KiB pages, which is fine).
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    points
}

fn decode_g1(bytes: &[u8]) -> Option<G1Affine> {
    let raw: &[u8; G1_BYTES] = bytes.try_into().ok()?;
    let p: Option<G1Affine> = G1Affine::from_uncompressed_unchecked(raw).into();
    p.filter(|p| !bool::from(p.is_identity()) && bool::from(p.is_on_curve()))
}

fn decode_g2(bytes: &[u8]) -> Option<G2Affine> {
    let raw: &[u8; G2_BYTES] = bytes.try_into().ok()?;
    let p: Option<G2Affine> = G2Affine::from_uncompressed_unchecked(raw).into();
    p.filter(|p| !bool::from(p.is_identity()) && bool::from(p.is_on_curve()))
}

/// The lengths of a `.params` file's verifying-key inputs and five queries, read without
/// decoding a point (the file is mapped and only the length fields are touched).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamsHeader {
    /// Public inputs (the verifying key's `ic`).
    pub inputs: usize,
    /// h points (domain size - 1).
    pub h: usize,
    /// l points (one per aux variable).
    pub l: usize,
    /// a points.
    pub a: usize,
    /// b_g1 points.
    pub b_g1: usize,
    /// b_g2 points.
    pub b_g2: usize,
}

impl ParamsHeader {
    /// Reads the lengths from the file at `path`; a truncated or corrupt file is an error.
    pub fn read(path: &Path) -> Result<Self> {
        let io_err = |source| Groth16Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io_err)?;
        // SAFETY: as in `Srs::read_file`: read-only, dropped before return.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
        let mut reader = Reader {
            bytes: &map,
            offset: 0,
            path,
        };
        const FIXED: usize = 3 * G1_BYTES + 3 * G2_BYTES + 4;
        let head = reader.take(FIXED, "verifying key")?;
        let inputs = u32::from_be_bytes(head[FIXED - 4..].try_into().expect("4 bytes")) as usize;
        reader.take(inputs * G1_BYTES, "verifying key ic")?;
        let mut skip = |query: &str, size: usize| -> Result<usize> {
            let len = reader.take(4, &format!("length of query {query}"))?;
            let count = u32::from_be_bytes(len.try_into().expect("4 bytes")) as usize;
            reader.take(count * size, &format!("query {query} ({count} points)"))?;
            Ok(count)
        };
        Ok(Self {
            inputs,
            h: skip("h", G1_BYTES)?,
            l: skip("l", G1_BYTES)?,
            a: skip("a", G1_BYTES)?,
            b_g1: skip("b_g1", G1_BYTES)?,
            b_g2: skip("b_g2", G2_BYTES)?,
        })
    }

    /// Bytes the decoded parameters hold (as [`Srs::byte_size`] will measure).
    pub fn decoded_bytes(&self) -> u64 {
        ((self.inputs + self.h + self.l + self.a + self.b_g1) * G1_BYTES
            + self.b_g2 * G2_BYTES
            + prepared_key_bytes(self.inputs)) as u64
    }

    /// The largest circuit these parameters prove: the domain (h + 1), inputs and aux (l).
    pub fn circuit_shape(&self) -> super::CircuitShape {
        super::CircuitShape {
            constraints: self.h + 1,
            inputs: self.inputs,
            aux: self.l,
        }
    }
}

impl Srs {
    /// Reads a bellperson `.params` file (verifying key, then h, l, a, b_g1, b_g2).
    ///
    /// Points are decoded in parallel and checked to be on the curve and finite; a truncated
    /// or corrupt file is an error naming the file, never a panic.
    pub fn read_file(path: &Path) -> Result<Self> {
        let io_err = |source| Groth16Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io_err)?;
        // SAFETY: the map is read-only and dropped before return; parameter files are written
        // once and not modified while cuzk runs (filecoin-proofs makes the same assumption).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
        Self::from_bytes(&map, path)
    }

    /// Decodes `.params` bytes; `origin` only names the source in errors.
    pub fn from_bytes(bytes: &[u8], origin: &Path) -> Result<Self> {
        let mut reader = Reader {
            bytes,
            offset: 0,
            path: origin,
        };
        let vk = read_vk(&mut reader)?;
        let h = reader.points("h", G1_BYTES, decode_g1)?;
        let l = reader.points("l", G1_BYTES, decode_g1)?;
        let a = reader.points("a", G1_BYTES, decode_g1)?;
        let b_g1 = reader.points("b_g1", G1_BYTES, decode_g1)?;
        let b_g2 = reader.points("b_g2", G2_BYTES, decode_g2)?;
        Ok(Self::from_queries(vk, h, l, a, b_g1, b_g2))
    }

    /// Takes parameters built in memory (bellperson's generator or ours).
    pub fn from_parameters(params: &Parameters<Bls12>) -> Self {
        Self::from_queries(
            params.vk.clone(),
            params.h.to_vec(),
            params.l.to_vec(),
            params.a.to_vec(),
            params.b_g1.to_vec(),
            params.b_g2.to_vec(),
        )
    }

    /// Takes a verifying key and the five queries as they are (synthetic parameters for
    /// benchmarks at production sizes included; nothing checks them against each other).
    pub fn from_queries(
        vk: VerifyingKey<Bls12>,
        h: Vec<G1Affine>,
        l: Vec<G1Affine>,
        a: Vec<G1Affine>,
        b_g1: Vec<G1Affine>,
        b_g2: Vec<G2Affine>,
    ) -> Self {
        let pvk = prepare_verifying_key(&vk);
        Self {
            vk,
            pvk,
            h,
            l,
            a,
            b_g1,
            b_g2,
            pce: Default::default(),
            guards: Default::default(),
        }
    }

    /// Keeps the guard `make` returns until these parameters are dropped, and ends it before
    /// their queries' memory is freed: for a driver's registration of a query's memory
    /// (page-locked for DMA), which must be undone while the memory is still allocated.
    /// At most one guard per `key`: `make` runs only when none is held under it yet (calls
    /// for the same key wait for each other). `make`'s error is returned as is, and nothing
    /// is held for `key` then.
    pub fn hold_guard<E>(
        &self,
        key: usize,
        make: impl FnOnce() -> std::result::Result<HeldGuard, E>,
    ) -> std::result::Result<(), E> {
        let mut guards = self.guards.lock().unwrap_or_else(|p| p.into_inner());
        if !guards.iter().any(|(k, _)| *k == key) {
            let guard = make()?;
            guards.push((key, guard));
        }
        Ok(())
    }

    /// Whether a guard is held under `key` (see [`Srs::hold_guard`]).
    pub fn holds_guard(&self, key: usize) -> bool {
        let guards = self.guards.lock().unwrap_or_else(|p| p.into_inner());
        guards.iter().any(|(k, _)| *k == key)
    }

    /// The slot of the PCE of the circuit these parameters prove (shared, so a background
    /// recording can fill it).
    pub fn pce_slot(&self) -> &std::sync::Arc<super::pce::PceSlot> {
        &self.pce
    }

    /// Bytes of the attached PCE (0 while none is ready).
    pub fn pce_bytes(&self) -> usize {
        self.pce.bytes()
    }

    /// The largest circuit these parameters prove: the domain (h + 1), inputs and aux (l).
    pub fn circuit_shape(&self) -> super::CircuitShape {
        super::CircuitShape {
            constraints: self.h.len() + 1,
            inputs: self.vk.ic.len(),
            aux: self.l.len(),
        }
    }

    /// Bytes of decoded points held in memory (what the memory budget charges).
    pub fn byte_size(&self) -> usize {
        let g1 = std::mem::size_of::<G1Affine>();
        let g2 = std::mem::size_of::<G2Affine>();
        (self.vk.ic.len() + self.h.len() + self.l.len() + self.a.len() + self.b_g1.len()) * g1
            + self.b_g2.len() * g2
            + prepared_key_bytes(self.vk.ic.len())
    }

    /// Converts back to bellperson's in-memory `Parameters` (for the reference prover).
    pub fn to_parameters(&self) -> Parameters<Bls12> {
        use std::sync::Arc;
        Parameters {
            vk: self.vk.clone(),
            h: Arc::new(self.h.clone()),
            l: Arc::new(self.l.clone()),
            a: Arc::new(self.a.clone()),
            b_g1: Arc::new(self.b_g1.clone()),
            b_g2: Arc::new(self.b_g2.clone()),
        }
    }
}

fn read_vk(reader: &mut Reader<'_>) -> Result<VerifyingKey<Bls12>> {
    const FIXED: usize = 3 * G1_BYTES + 3 * G2_BYTES + 4;
    let start = reader.offset;
    let head = reader.take(FIXED, "verifying key")?;
    let ic_len = u32::from_be_bytes(head[FIXED - 4..].try_into().expect("4 bytes")) as usize;
    let ic_bytes = ic_len
        .checked_mul(G1_BYTES)
        .ok_or_else(|| reader.corrupt(format!("verifying key: absurd ic length {ic_len}")))?;
    reader.take(ic_bytes, &format!("verifying key ic ({ic_len} points)"))?;
    VerifyingKey::<Bls12>::read(&reader.bytes[start..reader.offset])
        .map_err(|e| reader.corrupt(format!("verifying key: {e}")))
}
