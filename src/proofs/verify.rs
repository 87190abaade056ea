//! Verification with filecoin-proofs-api's own verifiers, from the inputs filecoin-ffi's verify
//! functions take (abi numbers, miner id, 32-byte values).

use std::collections::BTreeMap;

use filecoin_proofs_api::{PublicReplicaInfo, SectorId};

use super::error::{ProofError, ProofResult};
use super::registry::{self, bytes32, prover_id};

/// Checks a PoRep proof (`verify_seal`).
#[allow(clippy::too_many_arguments)]
pub fn verify_seal(
    registered: u64,
    comm_r: &[u8],
    comm_d: &[u8],
    miner_id: u64,
    sector: u64,
    ticket: &[u8],
    seed: &[u8],
    proof: &[u8],
) -> ProofResult<bool> {
    filecoin_proofs_api::seal::verify_seal(
        registry::seal_proof(registered)?,
        bytes32("comm_r", comm_r)?,
        bytes32("comm_d", comm_d)?,
        prover_id(miner_id),
        SectorId::from(sector),
        bytes32("ticket", ticket)?,
        bytes32("seed", seed)?,
        proof,
    )
    .map_err(ProofError::filecoin)
}

fn replicas(
    registered: filecoin_proofs_api::RegisteredPoStProof,
    sectors: &[(u64, Vec<u8>)],
) -> ProofResult<BTreeMap<SectorId, PublicReplicaInfo>> {
    if sectors.is_empty() {
        return Err(ProofError::InvalidArgument("no challenged sectors".into()));
    }
    sectors
        .iter()
        .map(|(id, comm_r)| {
            Ok((
                SectorId::from(*id),
                PublicReplicaInfo::new(registered, bytes32("comm_r", comm_r)?),
            ))
        })
        .collect()
}

/// Which PoSt verifier to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostKind {
    /// `verify_winning_post`.
    Winning,
    /// `verify_window_post` (partition proofs concatenated).
    Window,
}

/// Checks a WinningPoSt or WindowPoSt proof over `sectors` (sector number, comm_r).
pub fn verify_post(
    kind: PostKind,
    registered: u64,
    randomness: &[u8],
    miner_id: u64,
    sectors: &[(u64, Vec<u8>)],
    proof: &[u8],
) -> ProofResult<bool> {
    let registered = registry::post_proof(registered)?;
    let randomness = bytes32("randomness", randomness)?;
    let replicas = replicas(registered, sectors)?;
    let prover = prover_id(miner_id);
    match kind {
        PostKind::Winning => {
            filecoin_proofs_api::post::verify_winning_post(&randomness, proof, &replicas, prover)
        }
        PostKind::Window => filecoin_proofs_api::post::verify_window_post(
            &randomness,
            &[(registered, proof)],
            &replicas,
            prover,
        ),
    }
    .map_err(ProofError::filecoin)
}

/// Checks a SnapDeals update proof.
pub fn verify_update(
    registered: u64,
    comm_r_old: &[u8],
    comm_r_new: &[u8],
    comm_d_new: &[u8],
    proof: &[u8],
) -> ProofResult<bool> {
    filecoin_proofs_api::update::verify_empty_sector_update_proof(
        registry::update_proof(registered)?,
        proof,
        bytes32("comm_r_old", comm_r_old)?,
        bytes32("comm_r_new", comm_r_new)?,
        bytes32("comm_d_new", comm_d_new)?,
    )
    .map_err(ProofError::filecoin)
}
