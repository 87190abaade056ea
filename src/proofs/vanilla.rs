//! The parts of PoSt and SnapDeals proving that read sector files: sector challenges, PoSt
//! vanilla proofs from a sealed replica and its cache, and SnapDeals partition (vanilla)
//! proofs, all through filecoin-proofs-api exactly as filecoin-ffi calls it. The SNARKs over
//! these vanilla proofs are proved by the engine (`post.rs`, `snap.rs`).
//!
//! Inputs are abi numbers (go-state-types) and plain bytes and paths, as filecoin-ffi's Go
//! functions pass them; every list whose length the caller picks is capped (see
//! [`max_post_sectors`]) so no input makes this allocate without bound.

use std::path::{Path, PathBuf};

use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::{with_shape, FallbackPoStSectorProof, PoStType};
use filecoin_proofs_api::{PrivateReplicaInfo, RegisteredPoStProof, SectorId};
use storage_proofs_core::merkle::MerkleTreeTrait;

use super::error::{ProofError, ProofResult};
use super::post::MAX_PARTITIONS_PER_DEADLINE;
use super::registry::{self, bytes32, prover_id};

/// The most sectors one call may name for `registered`: a whole deadline, i.e. the proof
/// type's sectors per partition (2349 for 32 GiB WindowPoSt, 1 for WinningPoSt) times
/// builtin-actors' `max_partitions_per_deadline` (3000).
pub fn max_post_sectors(registered: RegisteredPoStProof) -> usize {
    registered.as_v1_config().sector_count * MAX_PARTITIONS_PER_DEADLINE
}

/// The most challenges one vanilla proof may answer: the proof type's challenge count (66
/// for WinningPoSt, 10 for WindowPoSt) times its sectors per partition, far above what
/// filecoin-proofs ever asks of one sector.
pub fn max_challenges(registered: RegisteredPoStProof) -> usize {
    let config = registered.as_v1_config();
    config.challenge_count * config.sector_count
}

fn randomness32(randomness: &[u8]) -> ProofResult<[u8; 32]> {
    bytes32("randomness", randomness)
}

/// `generate_winning_post_sector_challenge`: which of `eligible_sectors` sectors (indices into
/// the caller's sorted eligible set) a WinningPoSt challenges.
pub fn winning_post_sector_challenge(
    registered: u64,
    randomness: &[u8],
    miner_id: u64,
    eligible_sectors: u64,
) -> ProofResult<Vec<u64>> {
    let proof = registry::post_proof(registered)?;
    if proof.typ() != PoStType::Winning {
        return Err(ProofError::InvalidArgument(format!(
            "{proof:?} is not a WinningPoSt proof type"
        )));
    }
    if eligible_sectors == 0 {
        return Err(ProofError::InvalidArgument(
            "empty sector set is invalid".into(),
        ));
    }
    filecoin_proofs_api::post::generate_winning_post_sector_challenge(
        proof,
        &randomness32(randomness)?,
        eligible_sectors,
        prover_id(miner_id),
    )
    .map_err(ProofError::filecoin)
}

/// Per-sector challenges, as filecoin-ffi's `FallbackChallenges`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectorChallenges {
    /// Sector numbers, ascending (duplicates in the input appear once).
    pub sectors: Vec<u64>,
    /// `challenges[i]` are the leaf challenges of `sectors[i]`.
    pub challenges: Vec<Vec<u64>>,
}

/// `generate_fallback_sector_challenges`: the leaf challenges of each sector of a WinningPoSt
/// or WindowPoSt. A sector's challenges depend on its position in `sector_ids` (its partition
/// and index in it), so pass the sectors in the order they are proved (ascending).
pub fn fallback_sector_challenges(
    registered: u64,
    randomness: &[u8],
    miner_id: u64,
    sector_ids: &[u64],
) -> ProofResult<SectorChallenges> {
    let proof = registry::post_proof(registered)?;
    if sector_ids.is_empty() {
        return Err(ProofError::InvalidArgument("no sectors supplied".into()));
    }
    let max = max_post_sectors(proof);
    if sector_ids.len() > max {
        return Err(ProofError::InvalidArgument(format!(
            "{} sectors, more than a {proof:?} deadline holds ({max})",
            sector_ids.len()
        )));
    }
    let ids: Vec<SectorId> = sector_ids.iter().copied().map(SectorId::from).collect();
    let map = filecoin_proofs_api::post::generate_fallback_sector_challenges(
        proof,
        &randomness32(randomness)?,
        &ids,
        prover_id(miner_id),
    )
    .map_err(ProofError::filecoin)?;
    let (sectors, challenges) = map.into_iter().map(|(id, c)| (u64::from(id), c)).unzip();
    Ok(SectorChallenges {
        sectors,
        challenges,
    })
}

/// A sealed sector as filecoin-ffi's `PrivateSectorInfo` names it.
#[derive(Clone, Debug)]
pub struct Replica {
    /// `abi.RegisteredPoStProof` number.
    pub registered: u64,
    /// Sector number.
    pub sector: u64,
    /// Replica commitment (32 bytes).
    pub comm_r: Vec<u8>,
    /// The sector's cache directory (`p_aux`, `t_aux`, tree-r-last files).
    pub cache_dir: PathBuf,
    /// The sealed replica file.
    pub replica_path: PathBuf,
}

fn check_path(what: &str, p: &Path) -> ProofResult<()> {
    if p.as_os_str().is_empty() {
        return Err(ProofError::InvalidArgument(format!("{what} is empty")));
    }
    Ok(())
}

/// `generate_single_vanilla_proof`: one sector's PoSt vanilla proof (bincode
/// `FallbackPoStSectorProof`) for `challenges`, read from its replica and cache. Besides
/// filecoin-proofs' own checks (each inclusion proof valid, rooted at the tree's comm_r_last),
/// the sector's comm_r must be H(comm_c, comm_r_last), the check filecoin-proofs' path-based
/// WindowPoSt makes before calling a sector faulty: a mismatch fails here instead of as an
/// invalid SNARK later.
pub fn single_vanilla_proof(replica: &Replica, challenges: &[u64]) -> ProofResult<Vec<u8>> {
    let proof = registry::post_proof(replica.registered)?;
    let comm_r = bytes32("comm_r", &replica.comm_r)?;
    check_path("cache directory path", &replica.cache_dir)?;
    check_path("sealed sector path", &replica.replica_path)?;
    if challenges.is_empty() {
        return Err(ProofError::InvalidArgument("no challenges supplied".into()));
    }
    let max = max_challenges(proof);
    if challenges.len() > max {
        return Err(ProofError::InvalidArgument(format!(
            "{} challenges, more than {max} for {proof:?}",
            challenges.len()
        )));
    }
    let info = PrivateReplicaInfo::new(
        proof,
        comm_r,
        replica.cache_dir.clone(),
        replica.replica_path.clone(),
    );
    let sector = SectorId::from(replica.sector);
    let bytes =
        filecoin_proofs_api::post::generate_single_vanilla_proof(proof, sector, &info, challenges)
            .map_err(|e| {
                ProofError::filecoin(e.context(format!(
                    "sector {}: vanilla proof from {} and {}",
                    replica.sector,
                    replica.replica_path.display(),
                    replica.cache_dir.display()
                )))
            })?;
    let size = u64::from(proof.sector_size());
    if !with_shape!(size, comm_r_consistent, &bytes)? {
        return Err(ProofError::filecoin(anyhow::anyhow!(
            "sector {}: comm_r does not match the replica's trees (comm_c, comm_r_last in {})",
            replica.sector,
            replica.cache_dir.display()
        )));
    }
    Ok(bytes)
}

/// Whether the vanilla proof's comm_r is H(comm_c, comm_r_last) of every sector proof in it.
fn comm_r_consistent<Tree: 'static + MerkleTreeTrait>(bytes: &[u8]) -> ProofResult<bool> {
    let p: FallbackPoStSectorProof<Tree> = bincode::deserialize(bytes)
        .map_err(|e| ProofError::malformed("generated vanilla proof", e))?;
    Ok(p.vanilla_proof
        .sectors
        .iter()
        .all(|s| <Tree::Hasher as Hasher>::Function::hash2(&s.comm_c, &s.comm_r_last) == p.comm_r))
}

/// The paths of a SnapDeals update, in filecoin-ffi's `GenerateUpdateVanillaProofs` terms.
#[derive(Clone, Debug)]
pub struct UpdatePaths {
    /// The updated replica file.
    pub new_replica: PathBuf,
    /// The updated replica's cache directory.
    pub new_replica_cache: PathBuf,
    /// The original sealed replica (sector key).
    pub sector_key: PathBuf,
    /// The original replica's cache directory.
    pub sector_key_cache: PathBuf,
}

/// `generate_partition_proofs`: a SnapDeals update's vanilla proofs, one per partition
/// (bincode `PartitionProof`), read from the old and new replicas and their caches.
pub fn update_vanilla_proofs(
    registered: u64,
    comm_r_old: &[u8],
    comm_r_new: &[u8],
    comm_d_new: &[u8],
    paths: &UpdatePaths,
) -> ProofResult<Vec<Vec<u8>>> {
    let proof = registry::update_proof(registered)?;
    let comm_r_old = bytes32("comm_r_old", comm_r_old)?;
    let comm_r_new = bytes32("comm_r_new", comm_r_new)?;
    let comm_d_new = bytes32("comm_d_new", comm_d_new)?;
    check_path("new replica path", &paths.new_replica)?;
    check_path("new replica cache path", &paths.new_replica_cache)?;
    check_path("sector key path", &paths.sector_key)?;
    check_path("sector key cache path", &paths.sector_key_cache)?;
    let proofs = filecoin_proofs_api::update::generate_partition_proofs(
        proof,
        comm_r_old,
        comm_r_new,
        comm_d_new,
        &paths.sector_key,
        &paths.sector_key_cache,
        &paths.new_replica,
        &paths.new_replica_cache,
    )
    .map_err(|e| {
        ProofError::filecoin(e.context(format!(
            "update vanilla proofs from {}",
            paths.new_replica.display()
        )))
    })?;
    Ok(proofs.into_iter().map(|p| p.0).collect())
}

/// `get_num_partition_for_fallback_post`: how many partitions a WindowPoSt over
/// `num_sectors` sectors has.
pub fn num_partitions_for_fallback_post(registered: u64, num_sectors: u64) -> ProofResult<u64> {
    let proof = registry::post_proof(registered)?;
    let n = usize::try_from(num_sectors)
        .map_err(|_| ProofError::InvalidArgument("too many sectors".into()))?;
    filecoin_proofs_api::post::get_num_partition_for_fallback_post(proof, n)
        .map(|p| p as u64)
        .map_err(ProofError::filecoin)
}

/// filecoin-ffi's `GetSealVersion`: the proofs-api name of the registered seal proof.
pub fn seal_version(registered: u64) -> ProofResult<String> {
    Ok(format!("{:?}", registry::seal_proof(registered)?))
}

/// filecoin-ffi's `GetPoStVersion`: the proofs-api name of the registered PoSt proof.
pub fn post_version(registered: u64) -> ProofResult<String> {
    Ok(format!("{:?}", registry::post_proof(registered)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: [u8; 32] = [7u8; 32];

    fn invalid<T: std::fmt::Debug>(r: ProofResult<T>) -> String {
        match r {
            Err(
                e @ (ProofError::InvalidArgument(_) | ProofError::UnknownRegisteredProof { .. }),
            ) => e.to_string(),
            other => panic!("expected an invalid-argument error, got {other:?}"),
        }
    }

    #[test]
    fn winning_challenge_checks_its_input() {
        assert!(invalid(winning_post_sector_challenge(5, &R, 1000, 10)).contains("not a Winning"));
        assert!(invalid(winning_post_sector_challenge(0, &R, 1000, 0)).contains("empty"));
        assert!(invalid(winning_post_sector_challenge(0, &R[..31], 1000, 1)).contains("32 bytes"));
        invalid(winning_post_sector_challenge(99, &R, 1000, 1));
    }

    #[test]
    fn winning_challenge_is_filecoin_proofs_own() {
        let got = winning_post_sector_challenge(0, &R, 1000, 100).unwrap();
        let want = filecoin_proofs_api::post::generate_winning_post_sector_challenge(
            RegisteredPoStProof::StackedDrgWinning2KiBV1,
            &R,
            100,
            prover_id(1000),
        )
        .unwrap();
        assert_eq!(got, want);
        assert_eq!(got.len(), 1);
        assert!(got[0] < 100);
        // The Go test pins this value (go/ffi/vanilla_test.go).
        assert_eq!(got, [GO_WINNING_CHALLENGE]);
    }

    /// Values the Go tests compare with (randomness [7; 32], miner 1000).
    const GO_WINNING_CHALLENGE: u64 = 68;

    #[test]
    fn fallback_challenges_are_filecoin_proofs_own_sorted_and_deduplicated() {
        // Window 2 KiB V1_1 on chain (abi 10): two sectors per partition, 10 challenges each.
        let got = fallback_sector_challenges(10, &R, 1000, &[9, 3, 5, 3]).unwrap();
        let ids: Vec<SectorId> = [9u64, 3, 5, 3].into_iter().map(SectorId::from).collect();
        let want = filecoin_proofs_api::post::generate_fallback_sector_challenges(
            RegisteredPoStProof::StackedDrgWindow2KiBV1_2,
            &R,
            &ids,
            prover_id(1000),
        )
        .unwrap();
        assert_eq!(got.sectors, [3, 5, 9]);
        let want: Vec<Vec<u64>> = want.into_values().collect();
        assert_eq!(got.challenges, want);
        assert!(got.challenges.iter().all(|c| c.len() == 10));
        // 2 KiB sectors have 64 leaves.
        assert!(got.challenges.iter().flatten().all(|&c| c < 64));
        let sorted = fallback_sector_challenges(10, &R, 1000, &[1, 2]).unwrap();
        assert_eq!(sorted.challenges, GO_WINDOW_CHALLENGES);
    }

    /// Sector 1 and 2's challenges for abi 10, randomness [7; 32], miner 1000.
    const GO_WINDOW_CHALLENGES: [[u64; 10]; 2] = [
        [19, 22, 62, 12, 15, 45, 43, 44, 4, 17],
        [55, 3, 32, 18, 14, 23, 18, 8, 12, 7],
    ];

    #[test]
    fn fallback_challenges_check_their_input() {
        assert!(invalid(fallback_sector_challenges(10, &R, 1000, &[])).contains("no sectors"));
        invalid(fallback_sector_challenges(15, &R, 1000, &[1]));
        invalid(fallback_sector_challenges(10, &R[..1], 1000, &[1]));
        // Winning: one sector per partition, so at most 3000 sectors.
        let many: Vec<u64> = (0..3001).collect();
        assert!(invalid(fallback_sector_challenges(0, &R, 1000, &many)).contains("3000"));
    }

    fn replica(dir: &Path) -> Replica {
        Replica {
            registered: 10,
            sector: 1,
            comm_r: vec![1; 32],
            cache_dir: dir.to_path_buf(),
            replica_path: dir.join("sealed"),
        }
    }

    #[test]
    fn single_vanilla_proof_checks_its_input() {
        let dir = tempfile::tempdir().unwrap();
        let ok = replica(dir.path());
        assert!(invalid(single_vanilla_proof(&ok, &[])).contains("no challenges"));
        assert!(invalid(single_vanilla_proof(&ok, &[0; 21])).contains("more than 20"));
        let mut r = ok.clone();
        r.comm_r.pop();
        assert!(invalid(single_vanilla_proof(&r, &[0])).contains("comm_r"));
        let mut r = ok.clone();
        r.cache_dir = PathBuf::new();
        assert!(invalid(single_vanilla_proof(&r, &[0])).contains("cache directory"));
        let mut r = ok.clone();
        r.registered = 42;
        invalid(single_vanilla_proof(&r, &[0]));
        // Files that are not there: a filecoin-proofs error naming the sector.
        match single_vanilla_proof(&ok, &[0]) {
            Err(ProofError::Filecoin(e)) => assert!(format!("{e:#}").contains("sector 1")),
            other => panic!("expected a filecoin-proofs error, got {other:?}"),
        }
    }

    #[test]
    fn update_vanilla_proofs_check_their_input() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let paths = UpdatePaths {
            new_replica: p.join("new"),
            new_replica_cache: p.to_path_buf(),
            sector_key: p.join("key"),
            sector_key_cache: p.to_path_buf(),
        };
        invalid(update_vanilla_proofs(5, &R, &R, &R, &paths));
        assert!(invalid(update_vanilla_proofs(0, &R[..3], &R, &R, &paths)).contains("comm_r_old"));
        let mut empty = paths.clone();
        empty.sector_key = PathBuf::new();
        assert!(invalid(update_vanilla_proofs(0, &R, &R, &R, &empty)).contains("sector key"));
        assert!(matches!(
            update_vanilla_proofs(0, &R, &R, &R, &paths),
            Err(ProofError::Filecoin(_))
        ));
    }

    #[test]
    fn partitions_and_versions() {
        // 2 KiB WindowPoSt: 2 sectors per partition.
        assert_eq!(num_partitions_for_fallback_post(10, 5).unwrap(), 3);
        assert_eq!(num_partitions_for_fallback_post(10, 0).unwrap(), 1);
        assert!(num_partitions_for_fallback_post(0, 5).is_err());
        assert_eq!(post_version(10).unwrap(), "StackedDrgWindow2KiBV1_2");
        assert_eq!(seal_version(5).unwrap(), "StackedDrg2KiBV1_1");
        invalid(post_version(15));
    }

    /// Seals a 2 KiB V1_1 sector into `dir` with filecoin-proofs-api: (cache, replica, comm_r).
    fn seal_2k(dir: &Path, sector: u64) -> (PathBuf, PathBuf, [u8; 32]) {
        use filecoin_proofs_api::seal::{seal_pre_commit_phase1, seal_pre_commit_phase2};
        use filecoin_proofs_api::{RegisteredSealProof, UnpaddedBytesAmount};
        use std::io::{Seek, SeekFrom};
        let proof = RegisteredSealProof::StackedDrg2KiBV1_1;
        let size = UnpaddedBytesAmount(2032);
        let data: Vec<u8> = (0..size.0).map(|i| (i * 7 + sector) as u8).collect();
        let staged = dir.join(format!("staged-{sector}"));
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&staged)
            .unwrap();
        let (piece, _) =
            filecoin_proofs_api::seal::add_piece(proof, &data[..], &mut f, size, &[]).unwrap();
        f.seek(SeekFrom::Start(0)).unwrap();
        let cache = dir.join(format!("cache-{sector}"));
        let replica = dir.join(format!("sealed-{sector}"));
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::File::create(&replica).unwrap();
        let pc1 = seal_pre_commit_phase1(
            proof,
            &cache,
            &staged,
            &replica,
            prover_id(1000),
            SectorId::from(sector),
            [3; 32],
            &[piece],
        )
        .unwrap();
        let pc2 = seal_pre_commit_phase2(pc1, &cache, &replica).unwrap();
        (cache, replica, pc2.comm_r)
    }

    /// Path-based WindowPoSt as the Go layer composes it: challenges over the sorted sectors,
    /// one vanilla proof per sector, cuzk's prover, filecoin-proofs' verifier. A wrong comm_r
    /// and a missing tree file fail that sector's vanilla proof.
    #[test]
    fn window_post_from_sealed_sectors_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let sectors: Vec<(u64, PathBuf, PathBuf, [u8; 32])> = [4u64, 9, 11]
            .into_iter()
            .map(|n| {
                let (c, r, comm_r) = seal_2k(dir.path(), n);
                (n, c, r, comm_r)
            })
            .collect();
        let ids: Vec<u64> = sectors.iter().map(|s| s.0).collect();
        let ch = fallback_sector_challenges(10, &R, 1000, &ids).unwrap();
        assert_eq!(ch.sectors, ids);
        let replica = |i: usize| Replica {
            registered: 10,
            sector: sectors[i].0,
            comm_r: sectors[i].3.to_vec(),
            cache_dir: sectors[i].1.clone(),
            replica_path: sectors[i].2.clone(),
        };
        let vanilla: Vec<Vec<u8>> = (0..sectors.len())
            .map(|i| single_vanilla_proof(&replica(i), &ch.challenges[i]).unwrap())
            .collect();

        let srs = crate::proofs::SrsCache::from_env();
        // The parameters are generated here when missing (cached), as the fixtures do.
        let kind = crate::proofs::circuits::CircuitKind::parse("window-2k").unwrap();
        let mut rng = rand::thread_rng();
        crate::proofs::params::ensure_for_kind(kind, srs.dir(), &mut rng, &|_, _| {}).unwrap();
        let requests =
            crate::proofs::post::PostRequest::window_all_partitions(10, &R, 1000, &vanilla)
                .unwrap();
        assert_eq!(requests.len(), 2);
        let mut proof = Vec::new();
        for r in requests {
            let request = crate::proofs::ProofRequest::Post(r);
            match crate::proofs::prove(&request, &srs, &crate::groth16::cpu::CpuBackend) {
                Ok(p) => proof.extend_from_slice(&p),
                Err(e) => panic!("prove: {e}"),
            }
        }
        let public: Vec<crate::proofs::verify::ChallengedSector> = sectors
            .iter()
            .map(|s| crate::proofs::verify::ChallengedSector {
                registered: 10,
                number: s.0,
                comm_r: s.3.to_vec(),
            })
            .collect();
        assert!(
            crate::proofs::verify::verify_window_post(&R, 1000, &public, &[(10, proof)]).unwrap()
        );

        // comm_r of another sector: the files are fine, the commitment is not theirs.
        let mut wrong = replica(0);
        wrong.comm_r = sectors[1].3.to_vec();
        let e = single_vanilla_proof(&wrong, &ch.challenges[0]).unwrap_err();
        assert!(e.to_string().contains("comm_r does not match"), "{e}");
        // A tree file gone.
        for entry in std::fs::read_dir(&sectors[2].1).unwrap() {
            let p = entry.unwrap().path();
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains("tree-r-last")
            {
                std::fs::remove_file(p).unwrap();
            }
        }
        let e = single_vanilla_proof(&replica(2), &ch.challenges[2]).unwrap_err();
        assert!(matches!(e, ProofError::Filecoin(_)), "{e}");
    }
}
