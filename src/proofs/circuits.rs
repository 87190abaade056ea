//! The catalogue of Filecoin circuits: for a registered proof, its blank circuit (for parameter
//! generation), its parameter cache id and metadata, exactly as filecoin-proofs computes them.

use super::post_parts::SectorParts;
use crate::groth16::{PartedCircuit, WholeCircuit};
use bellperson::Circuit;
use blstrs::Scalar;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::parameters::{
    public_params, window_post_public_params, winning_post_public_params,
};
use filecoin_proofs::types::{PoRepConfig, PoStConfig};
use filecoin_proofs::with_shape;
use filecoin_proofs_api::{
    PoStType, RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof,
};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::{CacheEntryMetadata, CacheableParameters};
use storage_proofs_porep::stacked::{StackedCircuit, StackedCompound, StackedDrg};
use storage_proofs_post::fallback::{FallbackPoStCircuit, FallbackPoStCompound};
use storage_proofs_update::constants::TreeRHasher;
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound,
    PublicParams as UpdatePublicParams,
};

/// A Groth16 circuit family of Filecoin: one parameter set each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircuitKind {
    /// Interactive PoRep C2 (all seal proof versions of one size share parameters).
    Porep(RegisteredSealProof),
    /// WinningPoSt.
    WinningPost(RegisteredPoStProof),
    /// WindowPoSt (one partition).
    WindowPost(RegisteredPoStProof),
    /// SnapDeals empty sector update (one partition).
    SnapDeals(RegisteredUpdateProof),
}

/// Something to do with a blank circuit whose concrete type depends on the sector shape; the
/// visitor keeps its own result.
pub trait BlankCircuitVisitor {
    /// Called once with the blank circuit (no witness values).
    fn visit<C: Circuit<Scalar>>(&mut self, circuit: C);

    /// Called instead of [`BlankCircuitVisitor::visit`] for a circuit that is also known as
    /// its parts (a PoSt partition: one part per sector). By default the whole circuit is
    /// visited; a visitor that gains from the parts (the PCE recorder) takes them here.
    fn visit_parted<P: PartedCircuit>(&mut self, circuit: P) {
        self.visit(WholeCircuit(circuit));
    }
}

/// Identity of a parameter set in filecoin-proofs' cache.
#[derive(Clone, Debug)]
pub struct CacheKey {
    /// File stem after `v28-` (e.g. `stacked-proof-of-replication-...-032d31...`).
    pub id: String,
    /// Contents of the `.meta` file.
    pub meta: CacheEntryMetadata,
}

const SIZES: [(&str, u64); 5] = [
    ("2k", 2 << 10),
    ("8m", 8 << 20),
    ("512m", 512 << 20),
    ("32g", 32 << 30),
    ("64g", 64 << 30),
];

impl CircuitKind {
    /// Parses `porep-2k`, `winning-8m`, `window-32g`, `snap-512m`, ... (sizes 2k, 8m, 512m, 32g, 64g).
    pub fn parse(name: &str) -> Option<Self> {
        let (kind, size) = name.split_once('-')?;
        let index = SIZES.iter().position(|(s, _)| *s == size)?;
        use RegisteredPoStProof as P;
        use RegisteredSealProof as S;
        use RegisteredUpdateProof as U;
        Some(match kind {
            "porep" => Self::Porep(
                [
                    S::StackedDrg2KiBV1_1,
                    S::StackedDrg8MiBV1_1,
                    S::StackedDrg512MiBV1_1,
                    S::StackedDrg32GiBV1_1,
                    S::StackedDrg64GiBV1_1,
                ][index],
            ),
            "winning" => Self::WinningPost(
                [
                    P::StackedDrgWinning2KiBV1,
                    P::StackedDrgWinning8MiBV1,
                    P::StackedDrgWinning512MiBV1,
                    P::StackedDrgWinning32GiBV1,
                    P::StackedDrgWinning64GiBV1,
                ][index],
            ),
            "window" => Self::WindowPost(
                [
                    P::StackedDrgWindow2KiBV1_2,
                    P::StackedDrgWindow8MiBV1_2,
                    P::StackedDrgWindow512MiBV1_2,
                    P::StackedDrgWindow32GiBV1_2,
                    P::StackedDrgWindow64GiBV1_2,
                ][index],
            ),
            "snap" => Self::SnapDeals(
                [
                    U::StackedDrg2KiBV1,
                    U::StackedDrg8MiBV1,
                    U::StackedDrg512MiBV1,
                    U::StackedDrg32GiBV1,
                    U::StackedDrg64GiBV1,
                ][index],
            ),
            _ => return None,
        })
    }

    /// The four circuits of 2 KiB sectors (the test and devnet size).
    pub fn all_2k() -> [Self; 4] {
        ["porep-2k", "winning-2k", "window-2k", "snap-2k"]
            .map(|n| Self::parse(n).expect("known name"))
    }

    /// Sector size in bytes.
    pub fn sector_size(&self) -> u64 {
        u64::from(match self {
            Self::Porep(p) => p.sector_size(),
            Self::WinningPost(p) | Self::WindowPost(p) => p.sector_size(),
            Self::SnapDeals(p) => p.sector_size(),
        })
    }

    /// Short name as accepted by [`CircuitKind::parse`].
    pub fn name(&self) -> String {
        let kind = match self {
            Self::Porep(_) => "porep",
            Self::WinningPost(_) => "winning",
            Self::WindowPost(_) => "window",
            Self::SnapDeals(_) => "snap",
        };
        let size = SIZES
            .iter()
            .find(|(_, s)| *s == self.sector_size())
            .map(|(n, _)| *n)
            .unwrap_or("?");
        format!("{kind}-{size}")
    }

    /// Runs `visitor` on this kind's blank circuit.
    pub fn visit_blank(&self, visitor: &mut impl BlankCircuitVisitor) -> anyhow::Result<()> {
        let size = self.sector_size();
        match *self {
            Self::Porep(p) => {
                let cfg = p.as_v1_config();
                with_shape!(size, porep_blank, &cfg, visitor)
            }
            Self::WinningPost(p) | Self::WindowPost(p) => {
                let cfg = p.as_v1_config();
                with_shape!(size, post_blank, &cfg, visitor)
            }
            Self::SnapDeals(p) => {
                let cfg = p.as_v1_config();
                with_shape!(size, update_blank, &cfg, visitor)
            }
        }
    }

    /// The cache id and metadata filecoin-proofs uses for this kind's parameters.
    pub fn cache_key(&self) -> anyhow::Result<CacheKey> {
        let size = self.sector_size();
        match *self {
            Self::Porep(p) => with_shape!(size, porep_key, &p.as_v1_config()),
            Self::WinningPost(p) | Self::WindowPost(p) => {
                with_shape!(size, post_key, &p.as_v1_config())
            }
            Self::SnapDeals(_) => with_shape!(size, update_key, size),
        }
    }
}

type Stacked<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
type StackedCirc<Tree> = StackedCircuit<Tree, DefaultPieceHasher>;

fn porep_key<Tree: 'static + MerkleTreeTrait>(cfg: &PoRepConfig) -> anyhow::Result<CacheKey> {
    let pp = public_params::<Tree>(cfg)?;
    Ok(CacheKey {
        id: <Stacked<Tree> as CacheableParameters<StackedCirc<Tree>, _>>::cache_identifier(&pp),
        meta: <Stacked<Tree> as CacheableParameters<StackedCirc<Tree>, _>>::cache_meta(&pp),
    })
}

fn porep_blank<Tree: 'static + MerkleTreeTrait>(
    cfg: &PoRepConfig,
    visitor: &mut impl BlankCircuitVisitor,
) -> anyhow::Result<()> {
    let pp = public_params::<Tree>(cfg)?;
    let circuit = <Stacked<Tree> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        StackedCirc<Tree>,
    >>::blank_circuit(&pp);
    visitor.visit(circuit);
    Ok(())
}

fn post_public_params<Tree: 'static + MerkleTreeTrait>(
    cfg: &PoStConfig,
) -> anyhow::Result<storage_proofs_post::fallback::PublicParams> {
    match cfg.typ {
        PoStType::Winning => winning_post_public_params::<Tree>(cfg),
        PoStType::Window => window_post_public_params::<Tree>(cfg),
    }
}

fn post_key<Tree: 'static + MerkleTreeTrait>(cfg: &PoStConfig) -> anyhow::Result<CacheKey> {
    let pp = post_public_params::<Tree>(cfg)?;
    type F<T> = FallbackPoStCompound<T>;
    Ok(CacheKey {
        id: <F<Tree> as CacheableParameters<FallbackPoStCircuit<Tree>, _>>::cache_identifier(&pp),
        meta: <F<Tree> as CacheableParameters<FallbackPoStCircuit<Tree>, _>>::cache_meta(&pp),
    })
}

fn post_blank<Tree: 'static + MerkleTreeTrait>(
    cfg: &PoStConfig,
    visitor: &mut impl BlankCircuitVisitor,
) -> anyhow::Result<()> {
    let pp = post_public_params::<Tree>(cfg)?;
    visitor.visit_parted(SectorParts::<Tree>::blank(&pp)?);
    Ok(())
}

fn update_key<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    sector_size: u64,
) -> anyhow::Result<CacheKey> {
    let pp = UpdatePublicParams::from_sector_size(sector_size);
    type U<T> = EmptySectorUpdateCompound<T>;
    Ok(
        CacheKey {
            id: <U<Tree> as CacheableParameters<
                EmptySectorUpdateCircuit<Tree>,
                UpdatePublicParams,
            >>::cache_identifier(&pp),
            meta: <U<Tree> as CacheableParameters<
                EmptySectorUpdateCircuit<Tree>,
                UpdatePublicParams,
            >>::cache_meta(&pp),
        },
    )
}

fn update_blank<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    cfg: &PoRepConfig,
    visitor: &mut impl BlankCircuitVisitor,
) -> anyhow::Result<()> {
    let pp = UpdatePublicParams::from_sector_size(u64::from(cfg.sector_size));
    let circuit = <EmptySectorUpdateCompound<Tree> as CompoundProof<
        EmptySectorUpdate<Tree>,
        EmptySectorUpdateCircuit<Tree>,
    >>::blank_circuit(&pp);
    visitor.visit(circuit);
    Ok(())
}
