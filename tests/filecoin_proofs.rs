//! Every 2 KiB Filecoin kind through the split prover: filecoin-proofs-api's verifier accepts
//! our proofs, they are byte-identical to bellperson's for the same circuits and (r, s), and
//! bad inputs are typed errors.

mod common;

use bellperson::groth16::{create_proof, MappedParameters};
use bellperson::Circuit;
use blstrs::{Bls12, Scalar};
use cuzk::groth16::paramgen::cache;
use cuzk::groth16::{CpuBackend, Randomness};
use cuzk::proofs::porep::PoRepRequest;
use cuzk::proofs::post::{merge_window_post_partition_proofs, PostRequest};
use cuzk::proofs::request::NoCircuit;
use cuzk::proofs::snap::SnapDealsRequest;
use cuzk::proofs::{
    params, prove, prove_with_randomness, PartitionVisitor, ProofError, ProofRequest, ProofResult,
    SrsCache,
};
use rand::SeedableRng;
use storage_proofs_core::parameter_cache::read_cached_params;

/// Proves a visited circuit with bellperson's prover.
struct Bellperson<'a> {
    params: &'a MappedParameters<Bls12>,
    randomness: Randomness,
    proof: Vec<u8>,
}

impl PartitionVisitor for Bellperson<'_> {
    fn visit<C: Circuit<Scalar> + Send>(&mut self, circuit: C) -> ProofResult<()> {
        let proof =
            create_proof::<Bls12, _, _>(circuit, self.params, self.randomness.r, self.randomness.s)
                .expect("bellperson proves");
        proof.write(&mut self.proof).unwrap();
        Ok(())
    }
}

/// The interactive seed of a C1 output.
fn circuit_seed(c1: &[u8]) -> Vec<u8> {
    let c1: filecoin_proofs_api::seal::SealCommitPhase1Output = serde_json::from_slice(c1).unwrap();
    c1.seed.to_vec()
}

/// The sealing ticket of a C1 output.
fn circuit_ticket(c1: &[u8]) -> Vec<u8> {
    let c1: filecoin_proofs_api::seal::SealCommitPhase1Output = serde_json::from_slice(c1).unwrap();
    c1.ticket.to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn every_kind_verifies_and_matches_bellperson_byte_for_byte() {
    let fx = common::fixture();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(77);
    for (name, request) in fx.data.all_requests().unwrap() {
        let randomness: Vec<Randomness> = (0..request.partitions())
            .map(|_| Randomness::random(&mut rng))
            .collect();
        let (ours, timings) = prove_with_randomness(&request, &fx.srs, &CpuBackend, &randomness)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: {timings:?}");
        assert_eq!(
            ours.len(),
            192 * request.partitions(),
            "{name}: proof length"
        );
        assert!(
            request.verify(&ours).unwrap(),
            "{name}: filecoin-proofs rejects our proof"
        );
        if name == "porep-v1_1" {
            // An interactive C2's proof is its circuit proofs: the circuit-proofs request
            // (no miner id) accepts it partition by partition, and refuses a tampered one.
            let s = &fx.data.manifest.porep[0];
            let c1 = fx.data.read(&s.c1_file).unwrap();
            let circuit = PoRepRequest::circuit_proofs(&c1, s.sector).unwrap();
            assert!(circuit.verify(&ours).unwrap(), "{name}: circuit proofs");
            let mut tampered = ours.clone();
            tampered[100] ^= 1;
            assert!(!circuit.verify(&tampered).unwrap_or(false));
            assert!(!circuit.verify(&ours[..191]).unwrap());
            assert_eq!(circuit.finish(ours.clone()).unwrap(), ours);

            // Two copies of the sector aggregated (SnarkPack V2) verify with filecoin-proofs;
            // a tampered aggregate or another miner does not.
            let comm_r = cuzk::proofs::testdata::unhex(&s.comm_r).unwrap();
            let comm_d = cuzk::proofs::testdata::unhex(&s.comm_d).unwrap();
            let aggregate = cuzk::proofs::aggregate::aggregate_seal_proofs(
                s.registered,
                1,
                &[comm_r.clone(), comm_r.clone()],
                &[circuit_seed(&c1), circuit_seed(&c1)],
                &[ours.clone(), ours.clone()],
            )
            .unwrap();
            let input = cuzk::proofs::aggregate::AggregationInput {
                sector: s.sector,
                comm_r,
                comm_d,
                ticket: circuit_ticket(&c1),
                seed: circuit_seed(&c1),
            };
            let inputs = [input.clone(), input];
            let miner = fx.data.manifest.miner_id;
            let verify = |proof: &[u8], miner: u64| {
                cuzk::proofs::aggregate::verify_aggregate_seal_proofs(
                    s.registered,
                    1,
                    miner,
                    proof,
                    &inputs,
                )
            };
            assert!(verify(&aggregate, miner).unwrap(), "{name}: aggregate");
            assert!(!verify(&aggregate, miner + 1).unwrap_or(false));
            let mut tampered = aggregate.clone();
            tampered[aggregate.len() / 2] ^= 1;
            assert!(!verify(&tampered, miner).unwrap_or(false));
        }

        let key = request.circuit_kind().cache_key().unwrap();
        let mapped = read_cached_params(&cache::params_path(fx.srs.dir(), &key.id)).unwrap();
        let mut theirs = Vec::new();
        for (k, r) in randomness.iter().enumerate() {
            let mut visitor = Bellperson {
                params: &mapped,
                randomness: *r,
                proof: Vec::new(),
            };
            let inputs = request.visit_partition(k, Some(&mut visitor)).unwrap();
            theirs.extend_from_slice(&visitor.proof);
            if k == 0 {
                let expected = &fx.data.manifest.public_inputs;
                let (_, want) = expected.iter().find(|(n, _)| n == name).unwrap();
                let got: Vec<String> = inputs.iter().map(|s| hex(&s.to_bytes_le())).collect();
                assert_eq!(&got, want, "{name}: public inputs differ from the manifest");
            }
        }
        assert_eq!(hex(&ours), hex(&theirs), "{name}: differs from bellperson");

        if name == "window" {
            let merged = merge_window_post_partition_proofs(std::slice::from_ref(&ours)).unwrap();
            let reference = filecoin_proofs_api::post::merge_window_post_partition_proofs(
                filecoin_proofs_api::RegisteredPoStProof::StackedDrgWindow2KiBV1_2,
                vec![filecoin_proofs_api::PartitionSnarkProof(ours.clone())],
            )
            .unwrap();
            assert_eq!(merged, reference);
        }
    }
}

#[test]
fn a_proof_that_fails_the_reference_verifier_is_an_error_not_a_result() {
    let fx = common::fixture();
    let d = &fx.data;
    let w = &d.manifest.window;
    // Vanilla proofs out of sector order: the circuit is satisfied, but filecoin-proofs'
    // verifier orders sectors by number, so the proof is for another statement. filecoin-proofs'
    // own prover returns such a proof silently; ours must refuse it.
    let mut vanilla: Vec<Vec<u8>> = w.vanilla_files.iter().map(|f| d.read(f).unwrap()).collect();
    vanilla.reverse();
    let randomness = cuzk::proofs::testdata::unhex(&w.randomness).unwrap();
    let request = ProofRequest::Post(
        PostRequest::window(w.registered, &randomness, d.manifest.miner_id, &vanilla, 0).unwrap(),
    );
    match prove(&request, &fx.srs, &CpuBackend) {
        Err(ProofError::VerificationFailed { kind, subject, .. }) => {
            assert_eq!(kind, "window");
            assert!(subject.contains("sectors [2, 1]"), "{subject}");
        }
        other => panic!(
            "expected a failed self-check, got {:?}",
            other.map(|b| b.len())
        ),
    }
    // A proof of another request does not verify either.
    let other = prove(&d.winning_request().unwrap(), &fx.srs, &CpuBackend).unwrap();
    assert!(!d.window_request().unwrap().verify(&other).unwrap_or(false));
}

#[test]
fn a_whole_window_post_cut_into_partitions_verifies_over_all_sectors() {
    let fx = common::fixture();
    let d = &fx.data;
    let requests = d.window_all_requests().unwrap();
    assert_eq!(
        requests.len(),
        2,
        "three sectors make two 2-sector partitions"
    );
    let mut merged = Vec::new();
    for request in requests {
        merged.extend(prove(&ProofRequest::Post(request), &fx.srs, &CpuBackend).unwrap());
    }
    assert_eq!(merged.len(), 2 * 192);
    // filecoin-proofs' verifier, given all three sectors, accepts the merged proof.
    let w = &d.manifest.window_all;
    let registered = cuzk::proofs::registry::post_proof(w.registered).unwrap();
    let sectors = d.manifest.porep.iter().chain([&d.manifest.extra_sector]);
    let replicas: std::collections::BTreeMap<_, _> = sectors
        .map(|s| {
            let comm_r: [u8; 32] = cuzk::proofs::testdata::unhex(&s.comm_r)
                .unwrap()
                .try_into()
                .unwrap();
            (
                filecoin_proofs_api::SectorId::from(s.sector),
                filecoin_proofs_api::PublicReplicaInfo::new(registered, comm_r),
            )
        })
        .collect();
    let randomness: [u8; 32] = cuzk::proofs::testdata::unhex(&w.randomness)
        .unwrap()
        .try_into()
        .unwrap();
    let ok = filecoin_proofs_api::post::verify_window_post(
        &randomness,
        &[(registered, merged.as_slice())],
        &replicas,
        cuzk::proofs::registry::prover_id(d.manifest.miner_id),
    )
    .unwrap();
    assert!(ok, "filecoin-proofs rejects the merged WindowPoSt");
    merged[200] ^= 1;
    let bad = filecoin_proofs_api::post::verify_window_post(
        &randomness,
        &[(registered, merged.as_slice())],
        &replicas,
        cuzk::proofs::registry::prover_id(d.manifest.miner_id),
    );
    assert!(
        !bad.unwrap_or(false),
        "a corrupted second partition must not verify"
    );
}

fn expect_err<T>(result: ProofResult<T>, what: &str) -> ProofError {
    match result {
        Ok(_) => panic!("{what}: expected an error"),
        Err(e) => e,
    }
}

#[test]
fn bad_inputs_are_typed_errors() {
    let fx = common::fixture();
    let d = &fx.data;
    let c1 = d.read(&d.manifest.porep[0].c1_file).unwrap();
    let miner = d.manifest.miner_id;

    let e = expect_err(
        PoRepRequest::parse(b"{not json", 5, 1, miner),
        "malformed JSON",
    );
    assert!(matches!(e, ProofError::Malformed { .. }), "{e}");
    let e = expect_err(
        PoRepRequest::parse(&c1[..c1.len() / 2], 5, 1, miner),
        "truncated JSON",
    );
    assert!(matches!(e, ProofError::Malformed { .. }), "{e}");
    let e = expect_err(
        PoRepRequest::parse(&c1, 10, 1, miner),
        "C1 for another proof",
    );
    assert!(
        matches!(e, ProofError::RegisteredProofMismatch { .. }),
        "{e}"
    );
    let e = expect_err(PoRepRequest::parse(&c1, 99, 1, miner), "unknown seal proof");
    assert!(
        matches!(e, ProofError::UnknownRegisteredProof { value: 99, .. }),
        "{e}"
    );
    let e = expect_err(
        PoRepRequest::parse(&c1, 15, 1, miner),
        "an interactive C1 as NI-PoRep",
    );
    assert!(
        matches!(e, ProofError::RegisteredProofMismatch { .. }),
        "{e}"
    );

    let w = &d.manifest.winning;
    let randomness = cuzk::proofs::testdata::unhex(&w.randomness).unwrap();
    let vanilla: Vec<Vec<u8>> = w.vanilla_files.iter().map(|f| d.read(f).unwrap()).collect();
    let e = expect_err(
        PostRequest::winning(0, &randomness, miner, &[]),
        "empty vanilla",
    );
    assert!(matches!(e, ProofError::InvalidArgument(_)), "{e}");
    let corrupt = vec![vanilla[0][..vanilla[0].len() / 3].to_vec()];
    let e = expect_err(
        PostRequest::winning(0, &randomness, miner, &corrupt),
        "corrupt vanilla",
    );
    assert!(matches!(e, ProofError::Malformed { .. }), "{e}");
    let e = expect_err(
        PostRequest::winning(0, &[7u8; 33], miner, &vanilla),
        "33-byte randomness",
    );
    assert!(matches!(e, ProofError::InvalidArgument(_)), "{e}");
    let e = expect_err(
        PostRequest::winning(5, &randomness, miner, &vanilla),
        "window type",
    );
    assert!(matches!(e, ProofError::InvalidArgument(_)), "{e}");
    let e = expect_err(
        PostRequest::winning(42, &randomness, miner, &vanilla),
        "unknown PoSt",
    );
    assert!(
        matches!(e, ProofError::UnknownRegisteredProof { .. }),
        "{e}"
    );

    let s = &d.manifest.snap;
    let snap_vanilla: Vec<Vec<u8>> = s.vanilla_files.iter().map(|f| d.read(f).unwrap()).collect();
    let comm = |h: &str| cuzk::proofs::testdata::unhex(h).unwrap();
    let e = expect_err(
        SnapDealsRequest::parse(
            0,
            &snap_vanilla,
            &comm(&s.comm_r_old)[..31],
            &comm(&s.comm_r_new),
            &comm(&s.comm_d_new),
        ),
        "31-byte commitment",
    );
    assert!(matches!(e, ProofError::InvalidArgument(_)), "{e}");
    let e = expect_err(
        SnapDealsRequest::parse(
            7,
            &snap_vanilla,
            &comm(&s.comm_r_old),
            &comm(&s.comm_r_new),
            &comm(&s.comm_d_new),
        ),
        "unknown update proof",
    );
    assert!(
        matches!(e, ProofError::UnknownRegisteredProof { .. }),
        "{e}"
    );
    let e = expect_err(
        SnapDealsRequest::parse(
            0,
            &[],
            &comm(&s.comm_r_old),
            &comm(&s.comm_r_new),
            &comm(&s.comm_d_new),
        ),
        "no partitions",
    );
    assert!(matches!(e, ProofError::InvalidArgument(_)), "{e}");

    // Wrong partition index.
    let porep = d.porep_request(0).unwrap();
    let e = expect_err(
        porep.visit_partition(1, None::<&mut NoCircuit>),
        "partition 1 of 1",
    );
    assert!(matches!(e, ProofError::InvalidArgument(_)), "{e}");

    // Missing parameters: the error names the file and the variable.
    let empty = tempfile::tempdir().unwrap();
    let e = expect_err(
        prove(&porep, &SrsCache::new(empty.path()), &CpuBackend),
        "missing parameters",
    );
    let msg = e.to_string();
    assert!(matches!(e, ProofError::MissingParameters(_)), "{msg}");
    assert!(
        msg.contains(".params") && msg.contains(params::PARAMETER_CACHE_ENV),
        "{msg}"
    );

    // The engine-facing request type keeps serving after all this.
    let ok: ProofRequest = d.winning_request().unwrap();
    assert_eq!(ok.partitions(), 1);
}

/// Asserts two syntheses of one partition are the same assignment.
fn assert_same_assignment(
    name: &str,
    want: &cuzk::groth16::Assignment,
    got: &cuzk::groth16::Assignment,
) {
    assert!(want.abc.a[..] == got.abc.a[..], "{name}: a differs");
    assert!(want.abc.b[..] == got.abc.b[..], "{name}: b differs");
    assert!(want.abc.c[..] == got.abc.c[..], "{name}: c differs");
    assert!(want.inputs == got.inputs, "{name}: inputs differ");
    assert!(want.aux[..] == got.aux[..], "{name}: aux differs");
    assert_eq!(want.a_aux_density, got.a_aux_density, "{name}: A density");
    assert_eq!(
        want.b_input_density, got.b_input_density,
        "{name}: B input density"
    );
    assert_eq!(
        want.b_aux_density, got.b_aux_density,
        "{name}: B aux density"
    );
}

#[test]
fn every_kind_synthesizes_the_same_with_and_without_pce_and_a_foreign_pce_is_refused() {
    use cuzk::groth16::BufferSet;
    use cuzk::proofs::pce::kind_pce;
    let fx = common::fixture();
    let dir = fx.srs.dir();
    for (name, request) in fx.data.all_requests().unwrap() {
        let kind = request.circuit_kind();
        let srs = fx.srs.get(kind).unwrap();
        let pce = kind_pce(kind, &srs, dir).unwrap();
        eprintln!(
            "{name}: {} constraints, {} non-zeros, pce_bytes={} ({:.2} bytes per non-zero)",
            pce.num_constraints,
            pce.nonzeros(),
            pce.byte_size(),
            pce.byte_size() as f64 / pce.nonzeros() as f64
        );
        for k in 0..request.partitions() {
            let (plain, inputs) = request
                .synthesize_partition(k, BufferSet::default(), None)
                .unwrap();
            let (with_pce, pce_inputs) = request
                .synthesize_partition(k, BufferSet::default(), Some(&pce))
                .unwrap();
            assert_eq!(inputs, pce_inputs);
            assert_same_assignment(&format!("{name} partition {k}"), &plain, &with_pce);
            // Parted circuits (PoRep, SnapDeals, PoSt) split their parts over the threads:
            // three threads give ranges in the middle and of unequal length. None may fall
            // back to one thread (which would give the same witness, only slower).
            let fallbacks = cuzk::groth16::pce::parted_fallbacks();
            let (three_threads, _) = rayon::ThreadPoolBuilder::new()
                .num_threads(3)
                .build()
                .unwrap()
                .install(|| request.synthesize_partition(k, BufferSet::default(), Some(&pce)))
                .unwrap();
            assert_same_assignment(
                &format!("{name} partition {k}, 3 threads"),
                &plain,
                &three_threads,
            );
            assert_eq!(
                cuzk::groth16::pce::parted_fallbacks(),
                fallbacks,
                "{name} partition {k}: the parted witness fell back to one thread"
            );
        }
    }

    // WinningPoSt's constraint system used for a WindowPoSt partition: an error, not a proof.
    let winning = fx.data.winning_request().unwrap();
    let srs = fx.srs.get(winning.circuit_kind()).unwrap();
    let pce = kind_pce(winning.circuit_kind(), &srs, dir).unwrap();
    let window = fx.data.window_request().unwrap();
    match window.synthesize_partition(0, BufferSet::default(), Some(&pce)) {
        Err(ProofError::Groth16(cuzk::groth16::Groth16Error::ShapeMismatch(msg))) => {
            assert!(msg.contains("recorded"), "{msg}")
        }
        other => panic!("foreign PCE: {:?}", other.map(|(a, _)| a.num_constraints())),
    }

    // The same (r, s) with PCE on and off: the same proof bytes.
    let randomness = [Randomness::random(
        &mut rand_chacha::ChaCha20Rng::seed_from_u64(5),
    )];
    let off = SrsCache::new(dir).with_pce(false);
    let (with, _) = prove_with_randomness(&winning, &fx.srs, &CpuBackend, &randomness).unwrap();
    let (without, _) = prove_with_randomness(&winning, &off, &CpuBackend, &randomness).unwrap();
    assert_eq!(with, without, "winning: PCE on and off prove differently");
}

/// Records storage-proofs' blank PoSt circuit for `cfg` constraint by constraint: what the
/// parameters are made from.
fn record_blank_post<Tree: 'static + storage_proofs_core::merkle::MerkleTreeTrait>(
    cfg: &filecoin_proofs::types::PoStConfig,
) -> cuzk::groth16::Pce {
    use filecoin_proofs::parameters::{window_post_public_params, winning_post_public_params};
    use storage_proofs_core::compound_proof::CompoundProof;
    use storage_proofs_post::fallback::{FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound};
    let pp = match cfg.typ {
        filecoin_proofs::PoStType::Winning => winning_post_public_params::<Tree>(cfg),
        filecoin_proofs::PoStType::Window => window_post_public_params::<Tree>(cfg),
    }
    .unwrap();
    let circuit = <FallbackPoStCompound<Tree> as CompoundProof<
        FallbackPoSt<'_, Tree>,
        FallbackPoStCircuit<Tree>,
    >>::blank_circuit(&pp);
    cuzk::groth16::pce::record(circuit).unwrap()
}

/// A PoSt partition's constraint system is recorded from one sector and replicated (WinningPoSt:
/// 66 alike sectors), or whole (2 KiB WindowPoSt has only two); either way it is exactly what
/// recording storage-proofs' blank circuit gives.
#[test]
fn post_constraint_systems_recorded_from_one_sector_are_the_whole_recordings() {
    use cuzk::groth16::{pce, PartedCircuit};
    use cuzk::proofs::circuits::{BlankCircuitVisitor, CircuitKind};
    use cuzk::proofs::pce::record_kind;
    use filecoin_proofs::with_shape;
    use filecoin_proofs_api::RegisteredPoStProof as P;

    /// Notes whether a blank circuit's parts replicate.
    #[derive(Default)]
    struct Replicates(Option<bool>);
    impl BlankCircuitVisitor for Replicates {
        fn visit<C: Circuit<Scalar>>(&mut self, _: C) {}
        fn visit_parted<P: PartedCircuit>(&mut self, circuit: P) {
            self.0 = Some(pce::replicate_parts(&circuit).unwrap().is_some());
        }
    }

    for (name, registered, replicated) in [
        ("winning-2k", P::StackedDrgWinning2KiBV1, true),
        ("winning-8m", P::StackedDrgWinning8MiBV1, true),
        ("window-2k", P::StackedDrgWindow2KiBV1_2, false),
    ] {
        let kind = CircuitKind::parse(name).unwrap();
        let mut replicates = Replicates::default();
        kind.visit_blank(&mut replicates).unwrap();
        assert_eq!(replicates.0, Some(replicated), "{name}");
        let cfg = registered.as_v1_config();
        let whole = with_shape!(u64::from(cfg.sector_size), record_blank_post, &cfg);
        let recorded = record_kind(kind).unwrap();
        let kept_as_parts = matches!(recorded.rows, pce::Rows::Repeated(_));
        assert_eq!(kept_as_parts, replicated, "{name}");
        assert!(
            recorded.into_flat() == whole,
            "{name}: the recordings differ"
        );
    }
}
