//! Real 2 KiB test data, made with filecoin-proofs-api itself: two sealed sectors (V1_1 and
//! SyntheticPoRep) with their C1 outputs, WinningPoSt and WindowPoSt vanilla proofs, and a
//! SnapDeals update with its vanilla proofs, plus a manifest. Generated once into a cache
//! directory and reused.

use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{ensure, Context, Result};
use filecoin_proofs_api::seal::{
    add_piece, clear_synthetic_proofs, generate_synth_proofs, seal_commit_phase1,
    seal_pre_commit_phase1, seal_pre_commit_phase2,
};
use filecoin_proofs_api::update::{empty_sector_update_encode_into, generate_partition_proofs};
use filecoin_proofs_api::{
    PieceInfo, PrivateReplicaInfo, RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof,
    SectorId, UnpaddedBytesAmount,
};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::registry::prover_id;
use super::request::{NoCircuit, ProofRequest};
use super::{porep::PoRepRequest, post::PostRequest, snap::SnapDealsRequest};

/// Miner actor id used for all test data.
pub const MINER_ID: u64 = 1000;
/// Bumped whenever the layout or contents change, so stale caches are regenerated.
const FORMAT: u32 = 4;

/// A sealed test sector.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SealedSector {
    /// `abi.RegisteredSealProof` number.
    pub registered: u64,
    /// Sector number.
    pub sector: u64,
    /// C1 output JSON file (relative to the test data directory).
    pub c1_file: String,
    /// Replica commitment (hex).
    pub comm_r: String,
    /// Data commitment (hex).
    pub comm_d: String,
}

/// A PoSt request's inputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PostInputs {
    /// `abi.RegisteredPoStProof` number.
    pub registered: u64,
    /// Randomness (hex, 32 bytes).
    pub randomness: String,
    /// Vanilla proof files (bincode `FallbackPoStSectorProof`).
    pub vanilla_files: Vec<String>,
    /// Partition index (WindowPoSt).
    pub partition: usize,
}

/// A SnapDeals request's inputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SnapInputs {
    /// `abi.RegisteredUpdateProof` number.
    pub registered: u64,
    /// Commitments (hex).
    pub comm_r_old: String,
    /// Commitment after the update (hex).
    pub comm_r_new: String,
    /// Data commitment of the new data (hex).
    pub comm_d_new: String,
    /// Vanilla proof files, one per partition (bincode `PartitionProof`).
    pub vanilla_files: Vec<String>,
}

/// The manifest of a test data directory.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// Layout version.
    pub format: u32,
    /// Miner id of every request.
    pub miner_id: u64,
    /// Sealed sectors: V1_1 then SyntheticPoRep.
    pub porep: Vec<SealedSector>,
    /// WinningPoSt over the first sector.
    pub winning: PostInputs,
    /// WindowPoSt partition 0 over both sectors.
    pub window: PostInputs,
    /// A whole WindowPoSt over three sectors (both above and a third V1_1 sector, in sector
    /// order): two partitions of the 2 KiB proof type's two sectors.
    pub window_all: PostInputs,
    /// The third sector (used only by `window_all`).
    pub extra_sector: SealedSector,
    /// SnapDeals update of the first sector.
    pub snap: SnapInputs,
    /// Public inputs filecoin-proofs expects, per request (hex scalars, partition 0).
    pub public_inputs: Vec<(String, Vec<String>)>,
}

/// Test data on disk: the manifest and its directory.
pub struct TestData {
    /// Directory holding the manifest and the files it names.
    pub dir: PathBuf,
    /// The manifest.
    pub manifest: Manifest,
}

/// `$CUZK_CACHE/testdata-2k` (CUZK_CACHE defaults to `~/.cache/cuzk`).
pub fn default_dir() -> PathBuf {
    cache_root().join("testdata-2k")
}

/// `$CUZK_CACHE`, or `~/.cache/cuzk`.
pub fn cache_root() -> PathBuf {
    std::env::var_os("CUZK_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into()))
                .join(".cache/cuzk")
        })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Decodes a hex string (as written in the manifest).
pub fn unhex(s: &str) -> Result<Vec<u8>> {
    ensure!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).context("bad hex"))
        .collect()
}

impl TestData {
    /// Loads the test data in `dir`, generating it first when absent or stale.
    pub fn ensure(dir: &Path) -> Result<Self> {
        if let Ok(t) = Self::load(dir) {
            return Ok(t);
        }
        generate(dir)?;
        Self::load(dir)
    }

    /// Loads existing test data.
    pub fn load(dir: &Path) -> Result<Self> {
        let manifest: Manifest = serde_json::from_reader(
            File::open(dir.join("manifest.json")).context("no manifest.json")?,
        )?;
        ensure!(
            manifest.format == FORMAT,
            "test data format {} is stale",
            manifest.format
        );
        Ok(Self {
            dir: dir.to_path_buf(),
            manifest,
        })
    }

    /// Reads a file named in the manifest.
    pub fn read(&self, name: &str) -> Result<Vec<u8>> {
        fs::read(self.dir.join(name)).with_context(|| format!("reading test data {name}"))
    }

    /// The PoRep request for sealed sector `i` (0: V1_1, 1: SyntheticPoRep).
    pub fn porep_request(&self, i: usize) -> Result<ProofRequest> {
        let s = &self.manifest.porep[i];
        Ok(ProofRequest::PoRep(PoRepRequest::parse(
            &self.read(&s.c1_file)?,
            s.registered,
            s.sector,
            self.manifest.miner_id,
        )?))
    }

    fn vanilla(&self, files: &[String]) -> Result<Vec<Vec<u8>>> {
        files.iter().map(|f| self.read(f)).collect()
    }

    /// The WinningPoSt request.
    pub fn winning_request(&self) -> Result<ProofRequest> {
        let w = &self.manifest.winning;
        Ok(ProofRequest::Post(PostRequest::winning(
            w.registered,
            &unhex(&w.randomness)?,
            self.manifest.miner_id,
            &self.vanilla(&w.vanilla_files)?,
        )?))
    }

    /// The WindowPoSt (partition 0) request.
    pub fn window_request(&self) -> Result<ProofRequest> {
        let w = &self.manifest.window;
        Ok(ProofRequest::Post(PostRequest::window(
            w.registered,
            &unhex(&w.randomness)?,
            self.manifest.miner_id,
            &self.vanilla(&w.vanilla_files)?,
            w.partition,
        )?))
    }

    /// The SnapDeals request.
    pub fn snap_request(&self) -> Result<ProofRequest> {
        let s = &self.manifest.snap;
        Ok(ProofRequest::SnapDeals(SnapDealsRequest::parse(
            s.registered,
            &self.vanilla(&s.vanilla_files)?,
            &unhex(&s.comm_r_old)?,
            &unhex(&s.comm_r_new)?,
            &unhex(&s.comm_d_new)?,
        )?))
    }

    /// The whole three-sector WindowPoSt, one request per partition in order.
    pub fn window_all_requests(&self) -> Result<Vec<PostRequest>> {
        let w = &self.manifest.window_all;
        Ok(PostRequest::window_all_partitions(
            w.registered,
            &unhex(&w.randomness)?,
            self.manifest.miner_id,
            &self.vanilla(&w.vanilla_files)?,
        )?)
    }

    /// All requests by name: porep-v1_1, porep-synth, winning, window, snap.
    pub fn all_requests(&self) -> Result<Vec<(&'static str, ProofRequest)>> {
        REQUEST_NAMES
            .iter()
            .map(|&name| Ok((name, self.request(name)?)))
            .collect()
    }
}

/// The names of the test requests, in the order [`TestData::all_requests`] returns them.
pub const REQUEST_NAMES: [&str; 5] = ["porep-v1_1", "porep-synth", "winning", "window", "snap"];

impl TestData {
    /// Proves request `name` (see [`TestData::all_requests`]) with filecoin-proofs-api's own
    /// function on the same input: the baseline of the benchmarks.
    pub fn prove_with_filecoin_proofs(&self, name: &str) -> Result<Vec<u8>> {
        use filecoin_proofs_api::{post, seal, update, PartitionProofBytes};
        let m = &self.manifest;
        let prover = prover_id(m.miner_id);
        let bytes32 = |h: &str| -> Result<[u8; 32]> {
            unhex(h)?
                .try_into()
                .map_err(|_| anyhow::anyhow!("not 32 bytes"))
        };
        let files = |names: &[String]| -> Result<Vec<Vec<u8>>> {
            names.iter().map(|f| self.read(f)).collect()
        };
        Ok(match name {
            "porep-v1_1" | "porep-synth" => {
                let sector = &m.porep[usize::from(name == "porep-synth")];
                let c1: seal::SealCommitPhase1Output =
                    serde_json::from_slice(&self.read(&sector.c1_file)?)?;
                seal::seal_commit_phase2(c1, prover, SectorId::from(sector.sector))?.proof
            }
            "winning" => {
                let w = &m.winning;
                post::generate_winning_post_with_vanilla(
                    super::registry::post_proof(w.registered)?,
                    &bytes32(&w.randomness)?,
                    prover,
                    &files(&w.vanilla_files)?,
                )?
                .remove(0)
                .1
            }
            "window" => {
                let w = &m.window;
                post::generate_single_window_post_with_vanilla(
                    super::registry::post_proof(w.registered)?,
                    &bytes32(&w.randomness)?,
                    prover,
                    &files(&w.vanilla_files)?,
                    w.partition,
                )?
                .0
            }
            "snap" => {
                let s = &m.snap;
                update::generate_empty_sector_update_proof_with_vanilla(
                    super::registry::update_proof(s.registered)?,
                    files(&s.vanilla_files)?
                        .into_iter()
                        .map(PartitionProofBytes)
                        .collect(),
                    bytes32(&s.comm_r_old)?,
                    bytes32(&s.comm_r_new)?,
                    bytes32(&s.comm_d_new)?,
                )?
                .0
            }
            other => anyhow::bail!("unknown test request {other}"),
        })
    }

    /// The request named `name` (see [`TestData::all_requests`]).
    pub fn request(&self, name: &str) -> Result<ProofRequest> {
        match name {
            "porep-v1_1" => self.porep_request(0),
            "porep-synth" => self.porep_request(1),
            "winning" => self.winning_request(),
            "window" => self.window_request(),
            "snap" => self.snap_request(),
            other => anyhow::bail!("unknown test request {other}"),
        }
    }
}

struct Sealed {
    sector: SealedSector,
    cache: PathBuf,
    replica: PathBuf,
    comm_r: [u8; 32],
}

fn write_piece(dir: &Path, name: &str, rng: &mut impl Rng) -> Result<(PathBuf, PieceInfo)> {
    let size = UnpaddedBytesAmount(2032);
    let data: Vec<u8> = (0..size.0).map(|_| rng.gen()).collect();
    let path = dir.join(name);
    let mut staged = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    let (piece, _) = add_piece(
        RegisteredSealProof::StackedDrg2KiBV1_1,
        &data[..],
        &mut staged,
        size,
        &[],
    )?;
    staged.seek(SeekFrom::Start(0))?;
    Ok((path, piece))
}

fn seal(dir: &Path, registered: u64, sector: u64, rng: &mut impl Rng) -> Result<Sealed> {
    let proof = super::registry::seal_proof(registered)?;
    let prover = prover_id(MINER_ID);
    let id = SectorId::from(sector);
    let (staged, piece) = write_piece(dir, &format!("staged-{sector}"), rng)?;
    let cache = dir.join(format!("cache-{sector}"));
    let replica = dir.join(format!("sealed-{sector}"));
    fs::create_dir_all(&cache)?;
    File::create(&replica)?;
    let mut ticket: [u8; 32] = rng.gen();
    ticket[31] &= 0x3f;
    let mut seed: [u8; 32] = rng.gen();
    seed[31] &= 0x3f;
    let pieces = [piece];
    let pc1 = seal_pre_commit_phase1(
        proof, &cache, &staged, &replica, prover, id, ticket, &pieces,
    )?;
    let pc2 = seal_pre_commit_phase2(pc1, &cache, &replica)?;
    let (comm_r, comm_d) = (pc2.comm_r, pc2.comm_d);
    let synthetic = registered >= 10;
    if synthetic {
        generate_synth_proofs(&cache, &replica, prover, id, ticket, pc2.clone(), &pieces)?;
    }
    let c1 = seal_commit_phase1(&cache, &replica, prover, id, ticket, seed, pc2, &pieces)?;
    if synthetic {
        clear_synthetic_proofs(&cache)?;
    }
    let c1_file = format!("c1-{sector}.json");
    fs::write(dir.join(&c1_file), serde_json::to_vec(&c1)?)?;
    Ok(Sealed {
        sector: SealedSector {
            registered,
            sector,
            c1_file,
            comm_r: hex(&comm_r),
            comm_d: hex(&comm_d),
        },
        cache,
        replica,
        comm_r,
    })
}

fn post_vanilla(
    dir: &Path,
    registered: u64,
    randomness: [u8; 32],
    sectors: &[&Sealed],
    name: &str,
) -> Result<PostInputs> {
    let proof: RegisteredPoStProof = super::registry::post_proof(registered)?;
    let ids: Vec<SectorId> = sectors
        .iter()
        .map(|s| SectorId::from(s.sector.sector))
        .collect();
    let challenges = filecoin_proofs_api::post::generate_fallback_sector_challenges(
        proof,
        &randomness,
        &ids,
        prover_id(MINER_ID),
    )?;
    let mut vanilla_files = Vec::new();
    for (i, s) in sectors.iter().enumerate() {
        let id = SectorId::from(s.sector.sector);
        let replica = PrivateReplicaInfo::new(proof, s.comm_r, s.cache.clone(), s.replica.clone());
        let bytes = filecoin_proofs_api::post::generate_single_vanilla_proof(
            proof,
            id,
            &replica,
            &challenges[&id],
        )?;
        let file = format!("{name}-{i}.vanilla");
        fs::write(dir.join(&file), bytes)?;
        vanilla_files.push(file);
    }
    Ok(PostInputs {
        registered,
        randomness: hex(&randomness),
        vanilla_files,
        partition: 0,
    })
}

fn snap(dir: &Path, old: &Sealed, rng: &mut impl Rng) -> Result<SnapInputs> {
    let proof = RegisteredUpdateProof::StackedDrg2KiBV1;
    let (staged, piece) = write_piece(dir, "staged-update", rng)?;
    let new_cache = dir.join("cache-update");
    let new_replica = dir.join("update-replica");
    fs::create_dir_all(&new_cache)?;
    File::create(&new_replica)?.set_len(fs::metadata(&old.replica)?.len())?;
    let encoded = empty_sector_update_encode_into(
        proof,
        &new_replica,
        &new_cache,
        &old.replica,
        &old.cache,
        &staged,
        &[piece],
    )?;
    let vanilla = generate_partition_proofs(
        proof,
        old.comm_r,
        encoded.comm_r_new,
        encoded.comm_d_new,
        &old.replica,
        &old.cache,
        &new_replica,
        &new_cache,
    )?;
    let mut vanilla_files = Vec::new();
    for (i, p) in vanilla.iter().enumerate() {
        let file = format!("snap-{i}.vanilla");
        fs::write(dir.join(&file), &p.0)?;
        vanilla_files.push(file);
    }
    Ok(SnapInputs {
        registered: 0,
        comm_r_old: hex(&old.comm_r),
        comm_r_new: hex(&encoded.comm_r_new),
        comm_d_new: hex(&encoded.comm_d_new),
        vanilla_files,
    })
}

/// Seals, proves vanilla and writes everything (including the manifest, last) into `dir`.
pub fn generate(dir: &Path) -> Result<()> {
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp)?;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2048);
    let v1_1 = seal(&tmp, 5, 1, &mut rng)?;
    let synth = seal(&tmp, 10, 2, &mut rng)?;
    let mut randomness: [u8; 32] = rng.gen();
    randomness[31] &= 0x3f;
    // Raw copy for C and Go tests that do not parse the manifest.
    fs::write(tmp.join("randomness.bin"), randomness)?;
    let winning = post_vanilla(&tmp, 0, randomness, &[&v1_1], "winning")?;
    let window = post_vanilla(&tmp, 10, randomness, &[&v1_1, &synth], "window")?;
    let third = seal(&tmp, 5, 3, &mut rng)?;
    let window_all = post_vanilla(&tmp, 10, randomness, &[&v1_1, &synth, &third], "window3")?;
    let snap = snap(&tmp, &v1_1, &mut rng)?;
    let mut manifest = Manifest {
        format: FORMAT,
        miner_id: MINER_ID,
        porep: vec![v1_1.sector, synth.sector],
        winning,
        window,
        window_all,
        extra_sector: third.sector,
        snap,
        public_inputs: Vec::new(),
    };
    // Keep only what requests need: the manifest's files. Sector data is large and unused.
    for d in ["cache-1", "cache-2", "cache-3", "cache-update"] {
        fs::remove_dir_all(tmp.join(d))?;
    }
    for f in [
        "sealed-1",
        "sealed-2",
        "sealed-3",
        "update-replica",
        "staged-1",
        "staged-2",
        "staged-3",
        "staged-update",
    ] {
        fs::remove_file(tmp.join(f))?;
    }
    let data = TestData {
        dir: tmp.clone(),
        manifest: manifest.clone(),
    };
    for (name, request) in data.all_requests()? {
        let inputs = request.visit_partition(0, None::<&mut NoCircuit>)?;
        let inputs = inputs.iter().map(|s| hex(&s.to_bytes_le())).collect();
        manifest.public_inputs.push((name.to_string(), inputs));
    }
    fs::write(
        tmp.join("manifest.json"),
        serde_json::to_vec_pretty(&manifest)?,
    )?;
    let _ = fs::remove_dir_all(dir);
    fs::rename(&tmp, dir)?;
    Ok(())
}
