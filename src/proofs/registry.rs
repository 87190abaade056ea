//! Registered proof numbers (go-state-types `abi`) and the prover id, as Lotus and Curio pass
//! them through filecoin-ffi.

use filecoin_proofs_api::{
    RegisteredAggregationProof, RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof,
};

use super::error::{ProofError, ProofResult};

/// `abi.RegisteredSealProof` number -> proofs-api enum (V1, V1_1, SyntheticPoRep, NI-PoRep).
pub fn seal_proof(value: u64) -> ProofResult<RegisteredSealProof> {
    use RegisteredSealProof::*;
    const ALL: [RegisteredSealProof; 20] = [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
    ];
    ALL.get(value as usize)
        .copied()
        .ok_or(ProofError::UnknownRegisteredProof {
            family: "seal",
            value,
        })
}

/// Whether a seal proof is non-interactive PoRep (FIP-0090): its C2 output is a SnarkPack
/// aggregate of its partition proofs, not the partition proofs themselves.
pub fn is_non_interactive(proof: RegisteredSealProof) -> bool {
    use RegisteredSealProof::*;
    matches!(
        proof,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep
            | StackedDrg8MiBV1_2_Feat_NonInteractivePoRep
            | StackedDrg512MiBV1_2_Feat_NonInteractivePoRep
            | StackedDrg32GiBV1_2_Feat_NonInteractivePoRep
            | StackedDrg64GiBV1_2_Feat_NonInteractivePoRep
    )
}

/// `abi.RegisteredAggregationProof` number -> proofs-api enum (0 SnarkPackV1, 1 SnarkPackV2).
pub fn aggregation_proof(value: u64) -> ProofResult<RegisteredAggregationProof> {
    match value {
        0 => Ok(RegisteredAggregationProof::SnarkPackV1),
        1 => Ok(RegisteredAggregationProof::SnarkPackV2),
        _ => Err(ProofError::UnknownRegisteredProof {
            family: "aggregation",
            value,
        }),
    }
}

/// `abi.RegisteredPoStProof` number -> proofs-api enum (Window V1_1 on chain is proofs-api V1_2).
pub fn post_proof(value: u64) -> ProofResult<RegisteredPoStProof> {
    use RegisteredPoStProof::*;
    const ALL: [RegisteredPoStProof; 15] = [
        StackedDrgWinning2KiBV1,
        StackedDrgWinning8MiBV1,
        StackedDrgWinning512MiBV1,
        StackedDrgWinning32GiBV1,
        StackedDrgWinning64GiBV1,
        StackedDrgWindow2KiBV1,
        StackedDrgWindow8MiBV1,
        StackedDrgWindow512MiBV1,
        StackedDrgWindow32GiBV1,
        StackedDrgWindow64GiBV1,
        StackedDrgWindow2KiBV1_2,
        StackedDrgWindow8MiBV1_2,
        StackedDrgWindow512MiBV1_2,
        StackedDrgWindow32GiBV1_2,
        StackedDrgWindow64GiBV1_2,
    ];
    ALL.get(value as usize)
        .copied()
        .ok_or(ProofError::UnknownRegisteredProof {
            family: "PoSt",
            value,
        })
}

/// `abi.RegisteredUpdateProof` number -> proofs-api enum.
pub fn update_proof(value: u64) -> ProofResult<RegisteredUpdateProof> {
    use RegisteredUpdateProof::*;
    const ALL: [RegisteredUpdateProof; 5] = [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
    ];
    ALL.get(value as usize)
        .copied()
        .ok_or(ProofError::UnknownRegisteredProof {
            family: "update",
            value,
        })
}

/// The prover id filecoin-ffi derives from a miner actor id: the ID address payload (the
/// unsigned varint of the id) zero-padded to 32 bytes.
pub fn prover_id(miner_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut v = miner_id;
    let mut i = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[i] = byte;
            break;
        }
        out[i] = byte | 0x80;
        i += 1;
    }
    out
}

/// A 32-byte value from a slice, or an error naming it.
pub fn bytes32(what: &str, bytes: &[u8]) -> ProofResult<[u8; 32]> {
    bytes.try_into().map_err(|_| {
        ProofError::InvalidArgument(format!("{what} must be 32 bytes, got {}", bytes.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prover_id_is_the_uvarint_of_the_actor_id() {
        assert_eq!(prover_id(0)[..2], [0, 0]);
        assert_eq!(prover_id(1000)[..3], [0xe8, 0x07, 0]);
        assert_eq!(prover_id(127)[..2], [0x7f, 0]);
    }

    #[test]
    fn numbers_map_as_in_go_state_types() {
        assert_eq!(
            seal_proof(5).unwrap(),
            RegisteredSealProof::StackedDrg2KiBV1_1
        );
        assert_eq!(
            seal_proof(10).unwrap(),
            RegisteredSealProof::StackedDrg2KiBV1_1_Feat_SyntheticPoRep
        );
        assert_eq!(
            seal_proof(15).unwrap(),
            RegisteredSealProof::StackedDrg2KiBV1_2_Feat_NonInteractivePoRep
        );
        assert!(is_non_interactive(seal_proof(19).unwrap()));
        assert!(!is_non_interactive(seal_proof(10).unwrap()));
        assert!(aggregation_proof(1).is_ok() && aggregation_proof(2).is_err());
        assert!(matches!(
            seal_proof(20),
            Err(ProofError::UnknownRegisteredProof { .. })
        ));
        assert_eq!(
            post_proof(10).unwrap(),
            RegisteredPoStProof::StackedDrgWindow2KiBV1_2
        );
        assert!(post_proof(15).is_err());
        assert_eq!(
            update_proof(0).unwrap(),
            RegisteredUpdateProof::StackedDrg2KiBV1
        );
        assert!(update_proof(5).is_err());
    }
}
