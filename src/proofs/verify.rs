//! Verification with filecoin-proofs-api's own verifiers, from the inputs filecoin-ffi's verify
//! functions take (abi numbers, miner id, 32-byte values).

use std::collections::BTreeMap;

use filecoin_proofs_api::{PublicReplicaInfo, SectorId};

use super::error::{reject_panics, ProofError, ProofResult};
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
    reject_panics("seal proof", || {
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
    })
}

/// A challenged sector as filecoin-ffi hands it to the PoSt verifiers.
#[derive(Clone, Debug)]
pub struct ChallengedSector {
    /// `abi.RegisteredPoStProof` number the sector is checked with (filecoin-ffi: for
    /// WinningPoSt the sector's own seal proof's WinningPoSt type, for WindowPoSt the type of
    /// the first proof).
    pub registered: u64,
    /// Sector number.
    pub number: u64,
    /// Replica commitment (32 bytes).
    pub comm_r: Vec<u8>,
}

/// The replica map filecoin-proofs-api's verifiers take (one entry per sector number).
fn replicas(sectors: &[ChallengedSector]) -> ProofResult<BTreeMap<SectorId, PublicReplicaInfo>> {
    if sectors.is_empty() {
        return Err(ProofError::InvalidArgument("no challenged sectors".into()));
    }
    sectors
        .iter()
        .map(|s| {
            Ok((
                SectorId::from(s.number),
                PublicReplicaInfo::new(
                    registry::post_proof(s.registered)?,
                    bytes32("comm_r", &s.comm_r)?,
                ),
            ))
        })
        .collect()
}

/// Checks a WinningPoSt as filecoin-ffi does: the bytes of all `proofs` concatenated, over the
/// challenged sectors (the proof type comes from the sectors).
pub fn verify_winning_post(
    randomness: &[u8],
    miner_id: u64,
    sectors: &[ChallengedSector],
    proofs: &[(u64, Vec<u8>)],
) -> ProofResult<bool> {
    let randomness = bytes32("randomness", randomness)?;
    let replicas = replicas(sectors)?;
    let proof: Vec<u8> = proofs.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    reject_panics("WinningPoSt proof", || {
        filecoin_proofs_api::post::verify_winning_post(
            &randomness,
            &proof,
            &replicas,
            prover_id(miner_id),
        )
        .map_err(ProofError::filecoin)
    })
}

/// Checks a WindowPoSt as filecoin-ffi does: every `(registered proof, bytes)` entry is handed
/// to filecoin-proofs-api, which accepts exactly one (the partition proofs concatenated).
pub fn verify_window_post(
    randomness: &[u8],
    miner_id: u64,
    sectors: &[ChallengedSector],
    proofs: &[(u64, Vec<u8>)],
) -> ProofResult<bool> {
    let randomness = bytes32("randomness", randomness)?;
    let replicas = replicas(sectors)?;
    let proofs = proofs
        .iter()
        .map(|(registered, bytes)| Ok((registry::post_proof(*registered)?, bytes.as_slice())))
        .collect::<ProofResult<Vec<_>>>()?;
    reject_panics("WindowPoSt proof", || {
        filecoin_proofs_api::post::verify_window_post(
            &randomness,
            &proofs,
            &replicas,
            prover_id(miner_id),
        )
        .map_err(ProofError::filecoin)
    })
}

/// Checks a SnapDeals update proof.
pub fn verify_update(
    registered: u64,
    comm_r_old: &[u8],
    comm_r_new: &[u8],
    comm_d_new: &[u8],
    proof: &[u8],
) -> ProofResult<bool> {
    reject_panics("update proof", || {
        filecoin_proofs_api::update::verify_empty_sector_update_proof(
            registry::update_proof(registered)?,
            proof,
            bytes32("comm_r_old", comm_r_old)?,
            bytes32("comm_r_new", comm_r_new)?,
            bytes32("comm_d_new", comm_d_new)?,
        )
        .map_err(ProofError::filecoin)
    })
}
