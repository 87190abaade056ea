//! Saving a PCE next to its parameters and loading it back, so a node records each circuit
//! once, not once per start. The file names the parameter set it belongs to, ends with a
//! checksum, and is validated on load: a stale, truncated or corrupt file is an error (the
//! caller then records the circuit again), and no length read from it makes the loader
//! allocate more than the file holds.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use blstrs::Scalar;

use super::matrix::{Matrices, SparseMatrix};
use super::replicate::{Layout, Repeated};
use super::{Pce, Rows};
use crate::groth16::density::Density;

/// This format's magic: version 2 stores a repeated PCE's preamble and one part.
const MAGIC: &[u8; 8] = b"CUZKPCE2";
/// The magic of files an older cuzk wrote (every row stored); recorded again.
const OLD_MAGIC: &[u8; 8] = b"CUZKPCE1";

/// A running checksum over everything written or read (64-bit FNV-1a over 8-byte words).
#[derive(Clone, Copy)]
struct Checksum(u64);

impl Checksum {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn update(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.0 = (self.0 ^ u64::from_le_bytes(w.try_into().expect("8 bytes")))
                .wrapping_mul(0x100_0000_01b3);
        }
        for &b in words.remainder() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

struct Writer<W: Write> {
    out: W,
    sum: Checksum,
}

impl<W: Write> Writer<W> {
    fn bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.sum.update(bytes);
        self.out.write_all(bytes)
    }

    fn u64(&mut self, value: u64) -> std::io::Result<()> {
        self.bytes(&value.to_le_bytes())
    }

    fn words(&mut self, words: &[u64]) -> std::io::Result<()> {
        self.u64(words.len() as u64)?;
        for chunk in words.chunks(1 << 16) {
            let bytes: Vec<u8> = chunk.iter().flat_map(|w| w.to_le_bytes()).collect();
            self.bytes(&bytes)?;
        }
        Ok(())
    }
}

/// Writes `pce` for the parameter set `key` to `path` (through a temporary file renamed into
/// place, so a reader never sees half a file).
pub fn save(pce: &Pce, key: &str, path: &Path) -> std::io::Result<()> {
    static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{unique}", std::process::id()));
    let result = (|| {
        let mut w = Writer {
            out: BufWriter::new(std::fs::File::create(&tmp)?),
            sum: Checksum::new(),
        };
        w.bytes(MAGIC)?;
        w.u64(key.len() as u64)?;
        w.bytes(key.as_bytes())?;
        for n in [pce.num_inputs, pce.num_aux, pce.num_constraints] {
            w.u64(n as u64)?;
        }
        w.u64(pce.coeffs.len() as u64)?;
        for c in &pce.coeffs {
            w.bytes(&c.to_bytes_le())?;
        }
        // Parts (0: every row stored), the layout, then the stored matrices.
        let stored: Vec<&Matrices> = match &pce.rows {
            Rows::Flat(m) => {
                w.u64(0)?;
                vec![m]
            }
            Rows::Repeated(r) => {
                w.u64(r.parts as u64)?;
                for count in r.layout.to_counts() {
                    w.u64(count as u64)?;
                }
                vec![&r.preamble, &r.part]
            }
        };
        for m in stored.into_iter().flat_map(Matrices::each) {
            let (bytes, starts, rows, nonzeros) = m.parts();
            w.u64(rows as u64)?;
            w.u64(nonzeros)?;
            w.u64(bytes.len() as u64)?;
            w.bytes(bytes)?;
            w.words(starts)?;
        }
        for d in [&pce.a_aux_density, &pce.b_input_density, &pce.b_aux_density] {
            w.u64(d.len() as u64)?;
            w.words(d.words())?;
        }
        let sum = w.sum.0;
        w.out.write_all(&sum.to_le_bytes())?;
        w.out.into_inner().map_err(|e| e.into_error())?.sync_all()
    })();
    match result {
        Ok(()) => std::fs::rename(&tmp, path),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

struct Reader<R: Read> {
    input: R,
    /// Bytes left in the file: no claimed length may exceed it.
    left: u64,
    sum: Checksum,
}

impl<R: Read> Reader<R> {
    fn bytes(&mut self, len: u64, what: &str) -> Result<Vec<u8>, String> {
        if len > self.left {
            return Err(format!(
                "{what}: {len} bytes claimed, {} left in the file",
                self.left
            ));
        }
        let mut buf = vec![0u8; len as usize];
        self.input
            .read_exact(&mut buf)
            .map_err(|e| format!("{what}: {e}"))?;
        self.left -= len;
        self.sum.update(&buf);
        Ok(buf)
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b = self.bytes(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn count(&mut self, what: &str) -> Result<usize, String> {
        usize::try_from(self.u64(what)?).map_err(|_| format!("{what}: absurd count"))
    }

    fn words(&mut self, what: &str) -> Result<Vec<u64>, String> {
        let n = self.u64(what)?;
        let bytes = self.bytes(n.saturating_mul(8), what)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
            .collect())
    }
}

/// Loads the PCE saved at `path` for the parameter set `key`; an error says why it cannot be
/// used (missing, for another parameter set, truncated, corrupt).
pub fn load(path: &Path, key: &str) -> Result<Pce, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    let mut r = Reader {
        input: BufReader::with_capacity(1 << 20, file),
        left: len.saturating_sub(8),
        sum: Checksum::new(),
    };
    let pce = (|| {
        let magic = r.bytes(8, "magic")?;
        if magic == OLD_MAGIC {
            return Err("saved by an older cuzk".to_string());
        }
        if magic != MAGIC {
            return Err("not a cuzk PCE file".to_string());
        }
        let key_len = r.u64("key length")?;
        let saved_key = r.bytes(key_len, "key")?;
        if saved_key != key.as_bytes() {
            return Err(format!(
                "recorded for parameters {}, not {key}",
                String::from_utf8_lossy(&saved_key)
            ));
        }
        let num_inputs = r.count("inputs")?;
        let num_aux = r.count("aux")?;
        let num_constraints = r.count("constraints")?;
        let n = r.u64("coefficients")?;
        let raw = r.bytes(n.saturating_mul(32), "coefficients")?;
        let coeffs = raw
            .chunks_exact(32)
            .map(|c| Option::<Scalar>::from(Scalar::from_bytes_le(c.try_into().expect("32"))))
            .collect::<Option<Vec<_>>>()
            .ok_or("a coefficient is not a field element")?;
        let parts = r.count("parts")?;
        let mut counts = [0usize; 6];
        if parts > 0 {
            for count in &mut counts {
                *count = r.count("layout")?;
            }
        }
        let mut matrix = |name: &str| -> Result<SparseMatrix, String> {
            let rows = r.count(name)?;
            let nonzeros = r.u64(name)?;
            let len = r.u64(name)?;
            let bytes = r.bytes(len, name)?;
            let starts = r.words(name)?;
            Ok(SparseMatrix::from_parts(bytes, starts, rows, nonzeros))
        };
        let mut matrices = |name: &str| -> Result<Matrices, String> {
            Ok(Matrices {
                a: matrix(&format!("{name} A"))?,
                b: matrix(&format!("{name} B"))?,
                c: matrix(&format!("{name} C"))?,
            })
        };
        let rows = if parts == 0 {
            Rows::Flat(matrices("rows")?)
        } else {
            Rows::Repeated(Repeated {
                layout: Layout::from_counts(counts),
                parts,
                preamble: matrices("preamble")?,
                part: matrices("part")?,
            })
        };
        let mut density = |name: &str| -> Result<Density, String> {
            let bits = r.count(name)?;
            let words = r.words(name)?;
            Density::from_words(words, bits).ok_or_else(|| format!("{name}: bad bitmap"))
        };
        let a_aux_density = density("a aux density")?;
        let b_input_density = density("b input density")?;
        let b_aux_density = density("b aux density")?;
        Ok(Pce {
            num_inputs,
            num_aux,
            num_constraints,
            coeffs,
            rows,
            a_aux_density,
            b_input_density,
            b_aux_density,
            preamble: Default::default(),
        })
    })()
    .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut tail = [0u8; 8];
    r.input
        .read_exact(&mut tail)
        .map_err(|e| format!("{}: checksum: {e}", path.display()))?;
    if u64::from_le_bytes(tail) != r.sum.0 || r.left != 0 {
        return Err(format!(
            "{}: checksum mismatch or trailing bytes",
            path.display()
        ));
    }
    pce.validate()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(pce)
}
