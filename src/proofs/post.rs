//! WinningPoSt and single-partition WindowPoSt from vanilla proofs (bincode
//! `FallbackPoStSectorProof`), built as filecoin-proofs' `generate_*_with_vanilla` build them.

use std::any::Any;
use std::collections::BTreeMap;

use blstrs::Scalar;
use filecoin_hashers::Hasher;
use filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use filecoin_proofs::types::PoStConfig;
use filecoin_proofs::{
    as_safe_commitment, partition_vanilla_proofs, single_partition_vanilla_proofs, with_shape,
    FallbackPoStSectorProof, PoStType,
};
use filecoin_proofs_api::{PublicReplicaInfo, RegisteredPoStProof, SectorId};
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_post::fallback::{self, FallbackPoSt, FallbackPoStCompound, PublicSector};

use super::circuits::CircuitKind;
use super::error::{reject_panics, ProofError, ProofResult};
use super::post_parts::SectorParts;
use super::registry::{self, bytes32, prover_id};
use super::request::PartitionVisitor;

/// A parsed WinningPoSt or WindowPoSt (one partition) request.
pub struct PostRequest {
    /// The registered PoSt proof.
    pub registered: RegisteredPoStProof,
    /// Challenge randomness (32 bytes, a valid field element).
    pub randomness: [u8; 32],
    /// Prover id derived from the miner id.
    pub prover_id: [u8; 32],
    /// WindowPoSt partition index (None for WinningPoSt).
    pub partition_index: Option<usize>,
    /// Sector ids and replica commitments, in vanilla proof order.
    pub sectors: Vec<(SectorId, [u8; 32])>,
    /// `Vec<FallbackPoStSectorProof<Tree>>` for the sector shape.
    vanilla: Box<dyn Any + Send + Sync>,
}

/// Decoded vanilla proofs (shape-specific, type-erased) and their sectors.
type Decoded = (Box<dyn Any + Send + Sync>, Vec<(SectorId, [u8; 32])>);

fn decode<Tree: 'static + MerkleTreeTrait>(proofs: &[Vec<u8>]) -> ProofResult<Decoded> {
    let mut decoded: Vec<FallbackPoStSectorProof<Tree>> = Vec::with_capacity(proofs.len());
    for (i, bytes) in proofs.iter().enumerate() {
        let p: FallbackPoStSectorProof<Tree> = bincode::deserialize(bytes)
            .map_err(|e| ProofError::malformed(format!("vanilla proof {i}"), e))?;
        decoded.push(p);
    }
    let sectors = decoded
        .iter()
        .map(|p| {
            let mut comm_r = [0u8; 32];
            comm_r.copy_from_slice(p.comm_r.as_ref());
            (p.sector_id, comm_r)
        })
        .collect();
    Ok((Box::new(decoded), sectors))
}

/// The most partitions one WindowPoSt deadline can have (builtin-actors' policy
/// `max_partitions_per_deadline`); a larger partition index is a caller error.
pub const MAX_PARTITIONS_PER_DEADLINE: usize = 3000;

/// Parses a WindowPoSt abi number (5-14), refusing other PoSt types.
fn window_proof(registered: u64) -> ProofResult<RegisteredPoStProof> {
    let registered = registry::post_proof(registered)?;
    if registered.typ() != PoStType::Window {
        return Err(ProofError::InvalidArgument(format!(
            "{registered:?} is not a WindowPoSt proof type"
        )));
    }
    Ok(registered)
}

impl PostRequest {
    /// A whole WindowPoSt as filecoin-proofs' `generate_window_post_with_vanilla` proves it:
    /// the vanilla proofs (in sector-id order, the order filecoin-proofs' verifier expects)
    /// are cut into partitions of the proof type's sector count, one request per partition
    /// in order. The partition proofs concatenated are the WindowPoSt proof.
    pub fn window_all_partitions(
        registered: u64,
        randomness: &[u8],
        miner_id: u64,
        vanilla_proofs: &[Vec<u8>],
    ) -> ProofResult<Vec<Self>> {
        let abi = registered;
        let registered = window_proof(registered)?;
        if vanilla_proofs.is_empty() {
            return Err(ProofError::InvalidArgument(
                "vanilla_proofs cannot be an empty list".into(),
            ));
        }
        let per_partition = registered.as_v1_config().sector_count;
        let mut requests = Vec::new();
        let mut faulty = Vec::new();
        for (k, chunk) in vanilla_proofs.chunks(per_partition).enumerate() {
            match Self::window(abi, randomness, miner_id, chunk, k) {
                Ok(request) => requests.push(request),
                // Every partition is checked, so the node learns all its faulty sectors at once.
                Err(ProofError::FaultySectors(sectors)) => faulty.extend(sectors),
                Err(e) => return Err(e),
            }
        }
        if faulty.is_empty() {
            Ok(requests)
        } else {
            Err(ProofError::FaultySectors(faulty))
        }
    }

    /// WinningPoSt: `registered` abi number 0-4, 32-byte randomness, miner id, vanilla proofs.
    pub fn winning(
        registered: u64,
        randomness: &[u8],
        miner_id: u64,
        vanilla_proofs: &[Vec<u8>],
    ) -> ProofResult<Self> {
        let registered = registry::post_proof(registered)?;
        if registered.typ() != PoStType::Winning {
            return Err(ProofError::InvalidArgument(format!(
                "{registered:?} is not a WinningPoSt proof type"
            )));
        }
        Self::parse(registered, randomness, miner_id, vanilla_proofs, None)
    }

    /// One WindowPoSt partition: `registered` abi number 5-14, randomness, miner id, the vanilla
    /// proofs of the partition's sectors, and the partition index.
    pub fn window(
        registered: u64,
        randomness: &[u8],
        miner_id: u64,
        vanilla_proofs: &[Vec<u8>],
        partition_index: usize,
    ) -> ProofResult<Self> {
        let registered = window_proof(registered)?;
        if partition_index >= MAX_PARTITIONS_PER_DEADLINE {
            return Err(ProofError::InvalidArgument(format!(
                "partition index {partition_index} is out of range: a deadline has at most \
                 {MAX_PARTITIONS_PER_DEADLINE} partitions"
            )));
        }
        Self::parse(
            registered,
            randomness,
            miner_id,
            vanilla_proofs,
            Some(partition_index),
        )
    }

    fn parse(
        registered: RegisteredPoStProof,
        randomness: &[u8],
        miner_id: u64,
        vanilla_proofs: &[Vec<u8>],
        partition_index: Option<usize>,
    ) -> ProofResult<Self> {
        reject_panics("vanilla proofs", || {
            Self::parse_checked(
                registered,
                randomness,
                miner_id,
                vanilla_proofs,
                partition_index,
            )
        })
    }

    fn parse_checked(
        registered: RegisteredPoStProof,
        randomness: &[u8],
        miner_id: u64,
        vanilla_proofs: &[Vec<u8>],
        partition_index: Option<usize>,
    ) -> ProofResult<Self> {
        let randomness = bytes32("randomness", randomness)?;
        if vanilla_proofs.is_empty() {
            return Err(ProofError::InvalidArgument(
                "vanilla_proofs cannot be an empty list".into(),
            ));
        }
        let config = registered.as_v1_config();
        if vanilla_proofs.len() > config.sector_count {
            return Err(ProofError::InvalidArgument(format!(
                "{} vanilla proofs for one partition of {} sectors",
                vanilla_proofs.len(),
                config.sector_count
            )));
        }
        let size = u64::from(registered.sector_size());
        let (vanilla, sectors) = with_shape!(size, decode, vanilla_proofs)?;
        let request = Self {
            registered,
            randomness,
            prover_id: prover_id(miner_id),
            partition_index,
            sectors,
            vanilla,
        };
        if request.partition_index.is_some() {
            let faulty = with_shape!(size, faulty_sectors, &request)?;
            if !faulty.is_empty() {
                return Err(ProofError::FaultySectors(faulty));
            }
        }
        Ok(request)
    }

    /// The parameter set used.
    pub fn circuit_kind(&self) -> CircuitKind {
        match self.partition_index {
            None => CircuitKind::WinningPost(self.registered),
            Some(_) => CircuitKind::WindowPost(self.registered),
        }
    }

    /// "winning" or "window".
    pub fn kind_name(&self) -> &'static str {
        if self.partition_index.is_none() {
            "winning"
        } else {
            "window"
        }
    }

    /// The sectors proved, for messages.
    pub fn subject(&self) -> String {
        let ids: Vec<String> = self
            .sectors
            .iter()
            .map(|(id, _)| u64::from(*id).to_string())
            .collect();
        match self.partition_index {
            Some(p) => format!("sectors [{}] (partition index {p})", ids.join(", ")),
            None => format!("sectors [{}]", ids.join(", ")),
        }
    }

    /// See [`super::ProofRequest::visit_partition`] (PoSt requests have one circuit).
    pub fn visit_partition(
        &self,
        visitor: Option<&mut impl PartitionVisitor>,
    ) -> ProofResult<Vec<Scalar>> {
        let size = u64::from(self.registered.sector_size());
        with_shape!(size, post_circuit, self, visitor)
    }

    /// Verifies with filecoin-proofs-api's `verify_winning_post` / `verify_window_post`.
    ///
    /// A WindowPoSt partition proof is checked as filecoin-proofs checks a one-partition
    /// WindowPoSt over exactly these sectors where that is the same check: the first partition,
    /// or any partition of PoSt V1_2, whose challenges do not depend on the partition index.
    /// Other partitions (PoSt V1, partition 1 on) are checked against the verifying key with
    /// the public inputs filecoin-proofs' verifier derives for partition k of the deadline.
    pub fn verify(&self, proof: &[u8]) -> ProofResult<bool> {
        if let Some(k) = self.partition_index {
            if k > 0 && self.api_version() < ApiVersion::V1_2_0 {
                let size = u64::from(self.registered.sector_size());
                return with_shape!(size, verify_partition_with_key, self, proof);
            }
        }
        let replicas: BTreeMap<SectorId, PublicReplicaInfo> = self
            .sectors
            .iter()
            .map(|(id, comm_r)| (*id, PublicReplicaInfo::new(self.registered, *comm_r)))
            .collect();
        let result = match self.partition_index {
            None => filecoin_proofs_api::post::verify_winning_post(
                &self.randomness,
                proof,
                &replicas,
                self.prover_id,
            ),
            Some(_) => filecoin_proofs_api::post::verify_window_post(
                &self.randomness,
                &[(self.registered, proof)],
                &replicas,
                self.prover_id,
            ),
        };
        result.map_err(ProofError::filecoin)
    }

    fn api_version(&self) -> ApiVersion {
        self.registered.as_v1_config().api_version
    }
}

/// The request's vanilla proofs for its sector shape.
fn typed_vanilla<Tree: 'static + MerkleTreeTrait>(
    req: &PostRequest,
) -> ProofResult<&Vec<FallbackPoStSectorProof<Tree>>> {
    req.vanilla
        .downcast_ref::<Vec<FallbackPoStSectorProof<Tree>>>()
        .ok_or_else(|| ProofError::InvalidArgument("vanilla proofs of another sector shape".into()))
}

/// Public parameters of the request's PoSt circuit (one partition).
fn post_public_params<Tree: 'static + MerkleTreeTrait>(
    req: &PostRequest,
) -> ProofResult<compound_proof::PublicParams<'static, FallbackPoSt<'static, Tree>>> {
    let config: PoStConfig = req.registered.as_v1_config();
    let vanilla_params = match req.partition_index {
        None => winning_post_setup_params(&config).map_err(ProofError::filecoin)?,
        Some(_) => window_post_setup_params(&config),
    };
    <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::setup(
        &compound_proof::SetupParams {
            vanilla_params,
            partitions: None,
            priority: config.priority,
        },
    )
    .map_err(ProofError::filecoin)
}

/// Checks one WindowPoSt partition proof with bellperson's verifier, against the verifying key
/// in the parameter cache and the partition's public inputs as the full verifier derives them.
fn verify_partition_with_key<Tree: 'static + MerkleTreeTrait>(
    req: &PostRequest,
    proof: &[u8],
) -> ProofResult<bool> {
    if proof.len() != crate::groth16::PROOF_BYTES {
        return Ok(false);
    }
    let inputs = post_circuit::<Tree>(req, None::<&mut super::request::NoCircuit>)?;
    let pp = post_public_params::<Tree>(req)?;
    let vk =
        <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::verifying_key::<
            rand::rngs::OsRng,
        >(None, &pp.vanilla_params)
        .map_err(|e| ProofError::MissingParameters(format!("{e:#}")))?;
    let pvk = bellperson::groth16::prepare_verifying_key(&vk);
    let Ok(proof) = bellperson::groth16::Proof::read(proof) else {
        return Ok(false);
    };
    Ok(bellperson::groth16::verify_proof(&pvk, &proof, &inputs).unwrap_or(false))
}

/// The sectors of a WindowPoSt partition whose vanilla proofs storage-proofs' vanilla
/// verifier rejects, found before any proving so the node can declare them faulty (as
/// filecoin-ffi reports `FaultySectors`). In PoSt V1_2 a sector's challenges do not depend on
/// its place in the deadline, so each sector is checked alone and named; in PoSt V1 the
/// partition is checked as a whole and, when it fails, every sector of it is reported.
fn faulty_sectors<Tree: 'static + MerkleTreeTrait>(req: &PostRequest) -> ProofResult<Vec<u64>> {
    let vanilla = typed_vanilla::<Tree>(req)?;
    let partition_params = post_public_params::<Tree>(req)?.vanilla_params;
    // A sector checked alone is a partition of one: the verifier wants exactly sector_count
    // sector proofs, and padding every check to a whole partition would make the pass
    // quadratic in the partition's sectors (2349 at 32 GiB).
    let one_sector_params = fallback::PublicParams {
        sector_size: partition_params.sector_size,
        challenge_count: partition_params.challenge_count,
        sector_count: 1,
        api_version: partition_params.api_version,
    };
    let safe = |bytes: &[u8; 32], what: &str| -> ProofResult<<Tree::Hasher as Hasher>::Domain> {
        as_safe_commitment(bytes, what).map_err(|e| ProofError::InvalidArgument(format!("{e:#}")))
    };
    let randomness = safe(&req.randomness, "randomness")?;
    let prover_id = safe(&req.prover_id, "prover_id")?;
    let passes = |pp: &fallback::PublicParams,
                  sectors: &[&FallbackPoStSectorProof<Tree>],
                  k: usize|
     -> bool {
        let mut proofs = Vec::with_capacity(pp.sector_count);
        for p in sectors {
            match p.vanilla_proof.sectors.as_slice() {
                [one] => proofs.push(one.clone()),
                _ => return false,
            }
        }
        while let Some(last) = proofs
            .last()
            .cloned()
            .filter(|_| proofs.len() < pp.sector_count)
        {
            proofs.push(last);
        }
        let inputs = fallback::PublicInputs {
            randomness,
            prover_id,
            sectors: sectors
                .iter()
                .map(|p| PublicSector {
                    id: p.sector_id,
                    comm_r: p.comm_r,
                })
                .collect(),
            k: Some(k),
        };
        let proof = fallback::Proof { sectors: proofs };
        // storage-proofs turns 32-byte values into field elements with `expect`: a vanilla
        // proof holding a value outside the field panics there (found by FuzzWindowPoSt), and
        // is as faulty as one that does not verify.
        let verify = || FallbackPoSt::<Tree>::verify(pp, &inputs, &proof);
        matches!(
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(verify)),
            Ok(Ok(true))
        )
    };
    let ids = |sectors: &[FallbackPoStSectorProof<Tree>]| -> Vec<u64> {
        sectors.iter().map(|p| u64::from(p.sector_id)).collect()
    };
    if partition_params.api_version >= ApiVersion::V1_2_0 {
        Ok(vanilla
            .iter()
            .filter(|p| !passes(&one_sector_params, &[*p], 0))
            .map(|p| u64::from(p.sector_id))
            .collect())
    } else {
        let all: Vec<&FallbackPoStSectorProof<Tree>> = vanilla.iter().collect();
        let k = req.partition_index.unwrap_or(0);
        Ok(if passes(&partition_params, &all, k) {
            Vec::new()
        } else {
            ids(vanilla)
        })
    }
}

fn post_circuit<Tree: 'static + MerkleTreeTrait>(
    req: &PostRequest,
    visitor: Option<&mut impl PartitionVisitor>,
) -> ProofResult<Vec<Scalar>> {
    let vanilla = typed_vanilla::<Tree>(req)?;
    let config: PoStConfig = req.registered.as_v1_config();
    let safe = |bytes: &[u8; 32], what: &str| -> ProofResult<<Tree::Hasher as Hasher>::Domain> {
        as_safe_commitment(bytes, what).map_err(|e| ProofError::InvalidArgument(format!("{e:#}")))
    };
    let pub_inputs = fallback::PublicInputs {
        randomness: safe(&req.randomness, "randomness")?,
        prover_id: safe(&req.prover_id, "prover_id")?,
        sectors: vanilla
            .iter()
            .map(|p| PublicSector {
                id: p.sector_id,
                comm_r: p.comm_r,
            })
            .collect(),
        k: req.partition_index,
    };
    let (vanilla_params, partitions) = match req.partition_index {
        None => (
            winning_post_setup_params(&config).map_err(ProofError::filecoin)?,
            None,
        ),
        Some(_) => {
            let n = vanilla.len().div_ceil(config.sector_count);
            (window_post_setup_params(&config), (n > 1).then_some(n))
        }
    };
    let pp = <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::setup(
        &compound_proof::SetupParams {
            vanilla_params,
            partitions,
            priority: config.priority,
        },
    )
    .map_err(ProofError::filecoin)?;
    let partition_proof = match req.partition_index {
        None => partition_vanilla_proofs(
            &config,
            &pp.vanilla_params,
            &pub_inputs,
            pp.partitions.unwrap_or(1),
            vanilla,
        )
        .map_err(ProofError::filecoin)?
        .swap_remove(0),
        Some(_) => {
            single_partition_vanilla_proofs(&config, &pp.vanilla_params, &pub_inputs, vanilla)
                .map_err(ProofError::filecoin)?
        }
    };
    if let Some(visitor) = visitor {
        visitor.visit_parted(SectorParts::<Tree>::new(
            &pub_inputs.sectors,
            &partition_proof,
            &pp.vanilla_params,
        )?)?;
    }
    // WinningPoSt's verifier lists the sector once per challenged slot (sector_count times);
    // the circuit repeats it the same way, so the inputs must be generated from that list.
    // WindowPoSt's verifier derives partition k's inputs from chunk k of all the deadline's
    // sectors, and before PoSt V1_2 its challenges count from the sector's place in the
    // deadline: chunk k must be these sectors, behind k chunks of stand-ins (never read; at
    // most 3000 * 2349 small entries at 32 GiB). From V1_2 on partition 0 is the same.
    let (verifier_inputs, partition) = match req.partition_index {
        None => (
            fallback::PublicInputs {
                sectors: (0..pp.vanilla_params.sector_count)
                    .flat_map(|_| pub_inputs.sectors.iter().cloned())
                    .collect(),
                ..pub_inputs
            },
            0,
        ),
        Some(k) if k > 0 && pp.vanilla_params.api_version < ApiVersion::V1_2_0 => {
            let stand_in = pub_inputs.sectors[0].clone();
            let mut sectors = vec![stand_in; k * pp.vanilla_params.sector_count];
            sectors.extend(pub_inputs.sectors.iter().cloned());
            (
                fallback::PublicInputs {
                    sectors,
                    ..pub_inputs
                },
                k,
            )
        }
        Some(_) => (pub_inputs, 0),
    };
    <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::generate_public_inputs(
        &verifier_inputs,
        &pp.vanilla_params,
        Some(partition),
    )
    .map_err(ProofError::filecoin)
}

/// Concatenates single-partition WindowPoSt proofs in partition order, as filecoin-proofs'
/// `merge_window_post_partition_proofs` does.
pub fn merge_window_post_partition_proofs(partitions: &[Vec<u8>]) -> ProofResult<Vec<u8>> {
    let mut out = Vec::with_capacity(partitions.len() * crate::groth16::PROOF_BYTES);
    for (i, p) in partitions.iter().enumerate() {
        if p.len() != crate::groth16::PROOF_BYTES {
            return Err(ProofError::InvalidArgument(format!(
                "partition proof {i} has {} bytes, expected {}",
                p.len(),
                crate::groth16::PROOF_BYTES
            )));
        }
        out.extend_from_slice(p);
    }
    Ok(out)
}
