//! SnarkPack aggregation of PoRep proofs (filecoin-ffi's `AggregateSealProofs` and
//! `VerifyAggregateSeals`) through filecoin-proofs-api, and the inner-product SRS file it reads
//! from the parameter cache (an insecure one for tests, written next to the test parameters).

use std::path::{Path, PathBuf};

use filecoin_proofs_api::seal::SealCommitPhase2Output;
use filecoin_proofs_api::SectorId;
use storage_proofs_core::parameter_cache::{SRS_KEY_EXT, SRS_SHARED_KEY_NAME, VERSION};

use super::error::{reject_panics, ProofError, ProofResult};
use super::registry::{self, bytes32, prover_id};

/// The most circuit proofs one aggregate may hold (storage-proofs'
/// `SRS_MAX_PROOFS_TO_AGGREGATE`): more is refused before any work.
pub const MAX_AGGREGATED_PROOFS: usize = 65536;

/// How many circuit proofs the test SRS written by [`write_test_srs`] can aggregate.
pub const TEST_SRS_PROOFS: usize = 1024;

/// The inner-product SRS file filecoin-proofs looks up in parameter directory `dir` (the same
/// file for every sector size: `v28-fil-inner-product-v1.srs`).
pub fn srs_path(dir: &Path) -> PathBuf {
    dir.join(format!("v{VERSION}-{SRS_SHARED_KEY_NAME}.{SRS_KEY_EXT}"))
}

/// Writes an INSECURE inner-product SRS (its trapdoor is known to this process) able to
/// aggregate [`TEST_SRS_PROOFS`] proofs, under filecoin-proofs' name in `dir`, for tests and
/// devnets with test parameters. A real SRS file is never overwritten unless `force`.
pub fn write_test_srs(
    dir: &Path,
    rng: &mut impl rand_core::RngCore,
    force: bool,
) -> ProofResult<PathBuf> {
    let path = srs_path(dir);
    if path.exists() && !force {
        return Ok(path);
    }
    let srs =
        bellperson::groth16::aggregate::setup_fake_srs::<blstrs::Bls12, _>(rng, TEST_SRS_PROOFS);
    let tmp = path.with_extension("srs.partial");
    let write = || -> std::io::Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        srs.write(&mut file)?;
        std::io::Write::flush(&mut file)?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| ProofError::InvalidArgument(format!("writing {}: {e}", path.display())))?;
    Ok(path)
}

/// A filecoin-proofs call on caller input: its errors as filecoin errors, its panics (SnarkPack
/// asserts on SRS sizes) as malformed input.
fn guarded<T>(what: &str, f: impl FnOnce() -> anyhow::Result<T>) -> ProofResult<T> {
    reject_panics(what, || f().map_err(ProofError::filecoin))
}

fn commitments(what: &str, values: &[Vec<u8>]) -> ProofResult<Vec<[u8; 32]>> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| bytes32(&format!("{what} {i}"), v))
        .collect()
}

/// Aggregates the seal proofs of several sectors (each the circuit proofs of one C2, in the
/// order of `comm_rs` and `seeds`) into one SnarkPack proof, as filecoin-ffi's
/// `AggregateSealProofs`. `registered` is the `abi.RegisteredSealProof`, `aggregation` the
/// `abi.RegisteredAggregationProof` number.
pub fn aggregate_seal_proofs(
    registered: u64,
    aggregation: u64,
    comm_rs: &[Vec<u8>],
    seeds: &[Vec<u8>],
    proofs: &[Vec<u8>],
) -> ProofResult<Vec<u8>> {
    let registered = registry::seal_proof(registered)?;
    let aggregation = registry::aggregation_proof(aggregation)?;
    if proofs.is_empty() {
        return Err(ProofError::InvalidArgument("no proofs to aggregate".into()));
    }
    if comm_rs.len() != proofs.len() || seeds.len() != proofs.len() {
        return Err(ProofError::InvalidArgument(format!(
            "{} proofs, {} comm_rs and {} seeds: one of each per sector",
            proofs.len(),
            comm_rs.len(),
            seeds.len()
        )));
    }
    let partition_bytes = usize::from(registered.partitions()) * crate::groth16::PROOF_BYTES;
    if let Some(i) = proofs.iter().position(|p| p.len() != partition_bytes) {
        return Err(ProofError::InvalidArgument(format!(
            "proof {i} has {} bytes; a {registered:?} seal proof has {partition_bytes}",
            proofs[i].len()
        )));
    }
    let circuit_proofs = proofs.len() * usize::from(registered.partitions());
    if circuit_proofs > MAX_AGGREGATED_PROOFS {
        return Err(ProofError::InvalidArgument(format!(
            "{circuit_proofs} circuit proofs; an aggregate holds at most {MAX_AGGREGATED_PROOFS}"
        )));
    }
    let comm_rs = commitments("comm_r", comm_rs)?;
    let seeds = commitments("seed", seeds)?;
    let outputs: Vec<SealCommitPhase2Output> = proofs
        .iter()
        .map(|p| SealCommitPhase2Output { proof: p.clone() })
        .collect();
    guarded("aggregation", || {
        filecoin_proofs_api::seal::aggregate_seal_commit_proofs(
            registered,
            aggregation,
            &comm_rs,
            &seeds,
            &outputs,
        )
    })
}

/// One aggregated sector's public values, as filecoin-ffi's `AggregationInputs`.
#[derive(Clone, Debug)]
pub struct AggregationInput {
    /// Sector number.
    pub sector: u64,
    /// Replica commitment (32 bytes).
    pub comm_r: Vec<u8>,
    /// Data commitment (32 bytes).
    pub comm_d: Vec<u8>,
    /// Sealing ticket (32 bytes).
    pub ticket: Vec<u8>,
    /// Interactive seed (32 bytes).
    pub seed: Vec<u8>,
}

/// Checks a SnarkPack aggregate of seal proofs as filecoin-ffi's `VerifyAggregateSeals`: the
/// seal inputs of every sector from filecoin-proofs-api's `get_seal_inputs`, then its
/// `verify_aggregate_seal_commit_proofs`.
pub fn verify_aggregate_seal_proofs(
    registered: u64,
    aggregation: u64,
    miner_id: u64,
    proof: &[u8],
    inputs: &[AggregationInput],
) -> ProofResult<bool> {
    let registered = registry::seal_proof(registered)?;
    let aggregation = registry::aggregation_proof(aggregation)?;
    if inputs.is_empty() {
        return Err(ProofError::InvalidArgument("no seal verify infos".into()));
    }
    if inputs.len() * usize::from(registered.partitions()) > MAX_AGGREGATED_PROOFS {
        return Err(ProofError::InvalidArgument(format!(
            "{} sectors; an aggregate holds at most {MAX_AGGREGATED_PROOFS} circuit proofs",
            inputs.len()
        )));
    }
    let prover = prover_id(miner_id);
    let mut seal_inputs = Vec::new();
    let mut comm_rs = Vec::with_capacity(inputs.len());
    let mut seeds = Vec::with_capacity(inputs.len());
    for input in inputs {
        let comm_r = bytes32("comm_r", &input.comm_r)?;
        let seed = bytes32("seed", &input.seed)?;
        let per_sector = filecoin_proofs_api::seal::get_seal_inputs(
            registered,
            comm_r,
            bytes32("comm_d", &input.comm_d)?,
            prover,
            SectorId::from(input.sector),
            bytes32("ticket", &input.ticket)?,
            seed,
        )
        .map_err(ProofError::filecoin)?;
        seal_inputs.extend(per_sector);
        comm_rs.push(comm_r);
        seeds.push(seed);
    }
    guarded("aggregate verification", || {
        filecoin_proofs_api::seal::verify_aggregate_seal_commit_proofs(
            registered,
            aggregation,
            proof.to_vec(),
            &comm_rs,
            &seeds,
            seal_inputs,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_srs_file_has_filecoin_proofs_name() {
        let p = srs_path(Path::new("/x"));
        assert_eq!(p, Path::new("/x/v28-fil-inner-product-v1.srs"));
    }

    #[test]
    fn bad_aggregation_inputs_are_refused_before_any_work() {
        let c = vec![vec![1u8; 32]];
        let e = aggregate_seal_proofs(5, 1, &c, &c, &[]).unwrap_err();
        assert!(matches!(e, ProofError::InvalidArgument(_)), "{e}");
        let e = aggregate_seal_proofs(5, 1, &c, &[], &[vec![0; 192]]).unwrap_err();
        assert!(matches!(e, ProofError::InvalidArgument(_)), "{e}");
        let e = aggregate_seal_proofs(5, 1, &c, &c, &[vec![0; 100]]).unwrap_err();
        assert!(e.to_string().contains("has 100 bytes"), "{e}");
        let e = aggregate_seal_proofs(5, 7, &c, &c, &[vec![0; 192]]).unwrap_err();
        assert!(
            matches!(e, ProofError::UnknownRegisteredProof { .. }),
            "{e}"
        );
        let e = verify_aggregate_seal_proofs(5, 1, 1000, &[0; 10], &[]).unwrap_err();
        assert!(matches!(e, ProofError::InvalidArgument(_)), "{e}");
    }
}
