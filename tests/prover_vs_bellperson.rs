//! The split CPU prover against bellperson: byte-identical proofs for the same (r, s), accepted
//! by bellperson's verifier, for circuits of several shapes and a SHA-256 preimage circuit.

use std::sync::Arc;

use bellperson::groth16::{create_proof, generate_random_parameters, Parameters};
use bellperson::Circuit;
use blstrs::{Bls12, Scalar};
use cuzk::groth16::paramgen;
use cuzk::groth16::pce::Rows;
use cuzk::groth16::test_circuits::{RandomCircuit, Sha256Preimage, Shape};
use cuzk::groth16::{
    pce, synthesize, synthesize_parted_with_pce, synthesize_with_pce, verify, Assignment,
    BufferSet, CpuBackend, Groth16Error, PartedCircuit, Pce, Proof, ProverBackend, Randomness, Srs,
    WholeCircuit,
};
use rand::SeedableRng;

#[path = "common/parted.rs"]
mod parted;
use parted::Chains;
use rand_chacha::ChaCha20Rng;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// Asserts two assignments of one circuit are the same (a, b, c, inputs, aux, densities).
fn assert_same_assignment(want: &Assignment, got: &Assignment) {
    assert_eq!(&want.abc.a[..], &got.abc.a[..], "a differs");
    assert_eq!(&want.abc.b[..], &got.abc.b[..], "b differs");
    assert_eq!(&want.abc.c[..], &got.abc.c[..], "c differs");
    assert_eq!(want.inputs, got.inputs, "inputs differ");
    assert_eq!(&want.aux[..], &got.aux[..], "aux differs");
    assert_eq!(
        want.a_aux_density, got.a_aux_density,
        "A aux density differs"
    );
    assert_eq!(
        want.b_input_density, got.b_input_density,
        "B input density differs"
    );
    assert_eq!(
        want.b_aux_density, got.b_aux_density,
        "B aux density differs"
    );
}

/// Proves `circuit` with ours (PCE off, then on) and with bellperson for the same (r, s);
/// asserts identical bytes and a valid proof; returns the proof bytes.
fn assert_same_as_bellperson<C: Circuit<Scalar> + Clone + Send>(
    circuit: C,
    params: &Parameters<Bls12>,
    inputs: &[Scalar],
    seed: u64,
) -> [u8; 192] {
    let ours = assert_same_bytes_as_bellperson(circuit, params, seed);
    let srs = Srs::from_parameters(params);
    assert!(
        verify(&srs, &ours, inputs),
        "bellperson's verifier rejected our proof"
    );
    ours.to_bytes()
}

/// As [`assert_same_as_bellperson`] without the verification (for circuits that are not
/// satisfied): the proof, identical with PCE on and off and to bellperson's.
fn assert_same_bytes_as_bellperson<C: Circuit<Scalar> + Clone + Send>(
    circuit: C,
    params: &Parameters<Bls12>,
    seed: u64,
) -> Proof {
    let srs = Arc::new(Srs::from_parameters(params));
    let randomness = Randomness::random(&mut rng(seed));
    let asg = synthesize(circuit.clone(), BufferSet::default()).expect("synthesis");
    let recorded = pce::record(circuit.clone()).expect("recording");
    let with_pce =
        synthesize_with_pce(circuit.clone(), &recorded, BufferSet::default()).expect("PCE");
    assert_same_assignment(&asg, &with_pce);
    let ours_pce = CpuBackend
        .prove(with_pce, &srs, randomness)
        .expect("our proof, PCE");
    let ours = CpuBackend.prove(asg, &srs, randomness).expect("our proof");
    assert_eq!(
        ours.to_bytes(),
        ours_pce.to_bytes(),
        "PCE on and off differ"
    );
    let theirs = create_proof::<Bls12, _, _>(circuit, params, randomness.r, randomness.s)
        .expect("bellperson proof");
    let mut theirs_bytes = Vec::new();
    theirs.write(&mut theirs_bytes).unwrap();
    assert_eq!(
        ours.to_bytes().to_vec(),
        theirs_bytes,
        "proof bytes differ from bellperson"
    );
    ours
}

fn our_params<C: Circuit<Scalar>>(circuit: C, seed: u64) -> Parameters<Bls12> {
    paramgen::generate(circuit, &mut rng(seed), &|_, _| {}).expect("parameter generation")
}

#[test]
fn random_shapes_match_bellperson_byte_for_byte() {
    let _ = env_logger::builder().is_test(true).try_init();
    let shapes = [
        Shape::Mixed,
        Shape::InputsOnly,
        Shape::AuxOnly,
        Shape::AbsentFromA,
        Shape::EmptyB,
        Shape::Extended,
    ];
    for (i, shape) in shapes.into_iter().enumerate() {
        let circuit = RandomCircuit::new(shape, 300 + 37 * i, 10 + i as u64);
        let params = our_params(circuit.clone(), 100 + i as u64);
        let mut inputs = circuit.public_inputs();
        assert_same_as_bellperson(circuit.clone(), &params, &inputs, 1000 + i as u64);

        // A wrong witness still proves, identically to bellperson, but does not verify.
        let mut wrong = circuit.clone();
        wrong.wrong_witness = true;
        let srs = Arc::new(Srs::from_parameters(&params));
        let asg = synthesize(wrong, BufferSet::default()).unwrap();
        let proof = CpuBackend
            .prove(asg, &srs, Randomness::random(&mut rng(5)))
            .unwrap();
        if shape == Shape::InputsOnly {
            // Products are public inputs there: the wrong one is simply a different statement.
            inputs[circuit.inputs] += Scalar::from(1u64);
        }
        assert!(
            !verify(&srs, &proof, &inputs),
            "{shape:?}: wrong witness verified"
        );
    }
}

#[test]
fn circuits_large_enough_for_the_lane_msm_match_bellperson_byte_for_byte() {
    let _ = env_logger::builder().is_test(true).try_init();
    // 6000 constraints: h (8191 points) and the dense queries pass the 4096 points from which
    // the G1 MSM runs on AVX-512 IFMA lanes where the CPU has them.
    for (i, shape) in [Shape::Mixed, Shape::AuxOnly].into_iter().enumerate() {
        let circuit = RandomCircuit::new(shape, 6000, 40 + i as u64);
        let params = our_params(circuit.clone(), 140 + i as u64);
        let inputs = circuit.public_inputs();
        assert_same_as_bellperson(circuit, &params, &inputs, 1400 + i as u64);
    }
}

#[test]
fn power_of_two_sizes_zero_coefficients_and_wrong_witnesses_match_bellperson() {
    // bellperson adds one constraint per public input (ONE and 3 more): 1020 circuit
    // constraints fill the 2^10 domain exactly, 1021 overflow it by one.
    for (constraints, total) in [(1020, 1024), (1021, 1025)] {
        let circuit = RandomCircuit::new(Shape::Mixed, constraints, 50);
        let asg = synthesize(circuit.clone(), BufferSet::default()).unwrap();
        assert_eq!(
            asg.abc.len(),
            total,
            "constraints with the input constraints"
        );
        let params = our_params(circuit.clone(), 51);
        assert_same_as_bellperson(circuit.clone(), &params, &circuit.public_inputs(), 52);
    }
    // Terms with a zero coefficient still count in the density maps bellperson builds.
    let mut circuit = RandomCircuit::new(Shape::AbsentFromA, 300, 60);
    circuit.zero_coefficients = true;
    let params = our_params(circuit.clone(), 61);
    assert_same_as_bellperson(circuit.clone(), &params, &circuit.public_inputs(), 62);
    // An unsatisfied witness: the same bytes as bellperson, and a proof that does not verify.
    let mut wrong = RandomCircuit::new(Shape::Mixed, 300, 70);
    wrong.wrong_witness = true;
    let params = our_params(wrong.clone(), 71);
    let proof = assert_same_bytes_as_bellperson(wrong.clone(), &params, 72);
    let srs = Srs::from_parameters(&params);
    assert!(!verify(&srs, &proof, &wrong.public_inputs()));
}

#[test]
fn sha256_preimage_matches_bellperson_and_wrong_inputs_fail() {
    let len = Sha256Preimage::len_for_blocks(2);
    let params = our_params(
        Sha256Preimage {
            len,
            preimage: None,
        },
        7,
    );
    let circuit = Sha256Preimage::with_seed(len, 99);
    let inputs = circuit.public_inputs();
    assert_eq!(inputs.len(), 2, "a 256-bit digest packs into two scalars");
    assert_same_as_bellperson(circuit.clone(), &params, &inputs, 3);
    let srs = Arc::new(Srs::from_parameters(&params));
    let asg = synthesize(circuit, BufferSet::default()).unwrap();
    let proof = CpuBackend
        .prove(asg, &srs, Randomness::random(&mut rng(4)))
        .unwrap();
    let other_digest = Sha256Preimage::with_seed(len, 100).public_inputs();
    assert!(!verify(&srs, &proof, &other_digest));
}

#[test]
fn our_prover_works_with_bellpersons_generator_too() {
    let circuit = RandomCircuit::new(Shape::Mixed, 200, 77);
    let params = generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rng(8)).unwrap();
    assert_same_as_bellperson(circuit.clone(), &params, &circuit.public_inputs(), 9);
}

#[test]
fn srs_round_trips_through_the_params_file_format() {
    let circuit = RandomCircuit::new(Shape::Mixed, 150, 1);
    let params = our_params(circuit.clone(), 2);
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let srs = Srs::from_bytes(&bytes, "mem.params".as_ref()).unwrap();
    assert!(srs.to_parameters() == params, "decoded parameters differ");
    // The points, and the prepared verifying key's tables (charged to the engine's budget).
    assert_eq!(
        srs.byte_size(),
        (params.vk.ic.len() + params.h.len() + params.l.len() + params.a.len() + params.b_g1.len())
            * 96
            + params.b_g2.len() * 192
            + cuzk::groth16::srs::prepared_key_bytes(params.vk.ic.len())
    );
    // The size hint read from the file's query lengths, without decoding, is the same figure.
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &bytes).unwrap();
    let header = cuzk::groth16::srs::ParamsHeader::read(file.path()).unwrap();
    assert_eq!(header.decoded_bytes(), srs.byte_size() as u64);
    assert_eq!(header.circuit_shape(), srs.circuit_shape());
}

/// Counts the guards alive; each adds one while it lives.
struct CountedGuard(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for CountedGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn guards_held_with_parameters_are_made_once_per_key_and_end_with_them() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let params = our_params(RandomCircuit::new(Shape::Mixed, 20, 1), 3);
    let srs = Srs::from_parameters(&params);
    let alive = Arc::new(AtomicUsize::new(0));
    let made = AtomicUsize::new(0);
    let make = || -> Result<cuzk::groth16::srs::HeldGuard, String> {
        made.fetch_add(1, Ordering::SeqCst);
        alive.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(CountedGuard(alive.clone())))
    };
    srs.hold_guard(7, make).unwrap();
    srs.hold_guard(7, make).unwrap();
    srs.hold_guard(9, make).unwrap();
    assert_eq!(made.load(Ordering::SeqCst), 2, "one guard per key");
    assert!(srs.holds_guard(7) && srs.holds_guard(9) && !srs.holds_guard(8));
    let failed = srs.hold_guard(8, || Err::<cuzk::groth16::srs::HeldGuard, _>("refused"));
    assert_eq!(failed, Err("refused"));
    assert!(!srs.holds_guard(8), "a refused guard is not held");
    assert_eq!(alive.load(Ordering::SeqCst), 2);
    drop(srs);
    assert_eq!(
        alive.load(Ordering::SeqCst),
        0,
        "guards end with the parameters"
    );
}

#[test]
fn corrupt_or_truncated_params_are_errors() {
    let circuit = RandomCircuit::new(Shape::Mixed, 100, 3);
    let params = our_params(circuit, 4);
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    for cut in [0, 10, 900, bytes.len() / 2, bytes.len() - 1] {
        match Srs::from_bytes(&bytes[..cut], "cut.params".as_ref()) {
            Err(Groth16Error::CorruptParams { path, reason }) => {
                assert_eq!(path, std::path::Path::new("cut.params"));
                assert!(reason.contains("truncated"), "{reason}");
            }
            other => panic!("cut at {cut}: expected CorruptParams, got {other:?}"),
        }
    }
    // Flip bytes inside the first h point: no longer on the curve.
    let h_start = 864 + 4 + params.vk.ic.len() * 96 + 4;
    let mut corrupt = bytes.clone();
    corrupt[h_start + 50] ^= 0x55;
    assert!(matches!(
        Srs::from_bytes(&corrupt, "bad.params".as_ref()),
        Err(Groth16Error::CorruptParams { .. })
    ));
    // A missing file names the file.
    let err = Srs::read_file("/nonexistent/x.params".as_ref()).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/x.params"), "{err}");
}

#[test]
fn srs_too_small_and_shape_mismatch_are_errors() {
    let small = RandomCircuit::new(Shape::Mixed, 60, 5);
    let srs = Arc::new(Srs::from_parameters(&our_params(small, 6)));
    let big = synthesize(
        RandomCircuit::new(Shape::Mixed, 600, 5),
        BufferSet::default(),
    )
    .unwrap();
    let r = Randomness::random(&mut rng(1));
    assert!(matches!(
        CpuBackend.prove(big, &srs, r),
        Err(Groth16Error::SrsTooSmall { .. })
    ));

    let mut more_inputs = RandomCircuit::new(Shape::Mixed, 60, 5);
    more_inputs.inputs = 4;
    let asg = synthesize(more_inputs, BufferSet::default()).unwrap();
    assert!(matches!(
        CpuBackend.prove(asg, &srs, r),
        Err(Groth16Error::ShapeMismatch(_))
    ));

    let mut broken = synthesize(
        RandomCircuit::new(Shape::Mixed, 60, 5),
        BufferSet::default(),
    )
    .unwrap();
    broken.abc.c.pop();
    assert!(matches!(
        CpuBackend.prove(broken, &srs, r),
        Err(Groth16Error::ShapeMismatch(_))
    ));
}

#[test]
fn synthesis_fills_the_callers_buffer_set_and_prove_start_gives_all_of_it_back() {
    let circuit = RandomCircuit::new(Shape::Mixed, 100, 11);
    let srs = Arc::new(Srs::from_parameters(&our_params(circuit.clone(), 12)));
    let recorded = pce::record(circuit.clone()).expect("recording");
    for with_pce in [false, true] {
        let buffers = BufferSet::with_capacity(256);
        let (a, aux) = (buffers.abc.a.as_ptr(), buffers.aux.as_ptr());
        let asg = if with_pce {
            synthesize_with_pce(circuit.clone(), &recorded, buffers).unwrap()
        } else {
            synthesize(circuit.clone(), buffers).unwrap()
        };
        assert!(!asg.aux.is_empty());
        assert_eq!(
            (asg.abc.a.as_ptr(), asg.aux.as_ptr()),
            (a, aux),
            "synthesis (PCE {with_pce}) wrote a/b/c and aux into the caller's buffers"
        );
        let started = CpuBackend
            .prove_start(asg, &srs, Randomness::random(&mut rng(1)))
            .unwrap();
        let released = &started.released;
        assert!(released.abc.is_empty() && released.aux.is_empty());
        assert_eq!(
            (released.abc.a.as_ptr(), released.aux.as_ptr()),
            (a, aux),
            "the same buffers come back"
        );
        let proof = CpuBackend.prove_finish(started.pending).unwrap();
        assert!(verify(&srs, &proof, &circuit.public_inputs()));
    }
}

#[test]
fn a_circuit_that_differs_from_its_recording_is_an_error_and_a_saved_pce_round_trips() {
    // 256 constraints with the input constraints: a domain exactly a power of two.
    let probe = pce::record(RandomCircuit::new(Shape::Mixed, 100, 21)).unwrap();
    let own = 256 - (probe.num_constraints - 100);
    let recorded_from = RandomCircuit::new(Shape::Mixed, own, 21);
    let recorded = pce::record(recorded_from.clone()).unwrap();
    assert_eq!(recorded.num_constraints, 256);

    // One constraint more (and its variables): refused, not proved with the wrong matrices.
    let altered = RandomCircuit::new(Shape::Mixed, own + 1, 21);
    match synthesize_with_pce(altered, &recorded, BufferSet::default()) {
        Err(Groth16Error::ShapeMismatch(msg)) => assert!(msg.contains("recorded"), "{msg}"),
        other => panic!(
            "an altered circuit gave {:?}",
            other.map(|a| a.num_constraints())
        ),
    }
    // Same counts but one more public input instead of an aux variable: refused too.
    let mut more_inputs = recorded_from.clone();
    more_inputs.inputs += 1;
    assert!(synthesize_with_pce(more_inputs, &recorded, BufferSet::default()).is_err());
    // Another witness for the same shape is fine.
    let other_witness = recorded_from.clone().with_witness(5);
    let want = synthesize(other_witness.clone(), BufferSet::default()).unwrap();
    let got = synthesize_with_pce(other_witness, &recorded, BufferSet::default()).unwrap();
    assert_same_assignment(&want, &got);

    // Saved and loaded, it is the same; for other parameters, truncated or flipped, it is an
    // error.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.pce");
    pce::file::save(&recorded, "key-a", &path).unwrap();
    assert_eq!(pce::file::load(&path, "key-a").unwrap(), recorded);
    assert!(pce::file::load(&path, "key-b")
        .unwrap_err()
        .contains("key-a"));
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 9]).unwrap();
    assert!(pce::file::load(&path, "key-a").is_err());
    // A file of the first format (every row stored, magic CUZKPCE1) is recorded again.
    let mut first_format = bytes.clone();
    first_format[..8].copy_from_slice(b"CUZKPCE1");
    std::fs::write(&path, &first_format).unwrap();
    assert!(pce::file::load(&path, "key-a")
        .unwrap_err()
        .contains("older cuzk"));
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x10;
    std::fs::write(&path, &flipped).unwrap();
    assert!(pce::file::load(&path, "key-a").is_err());
    // A length field claiming far more than the file holds is refused before allocating.
    let mut huge = bytes;
    huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(&path, &huge).unwrap();
    assert!(pce::file::load(&path, "key-a")
        .unwrap_err()
        .contains("left in the file"));
}

/// Equal parts are written by their threads straight into the buffer set; unequal ones overflow
/// or underfill those windows and are synthesized again on one thread. Both must give the whole
/// circuit's assignment.
#[test]
fn a_parted_circuit_synthesized_in_parallel_is_the_whole_circuit_and_a_moving_preamble_is_refused()
{
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    for (parts, unequal_parts) in [1, 2, 7].into_iter().flat_map(|p| [(p, false), (p, true)]) {
        let chains = |preamble_depends_on_range, shared_preamble| Chains {
            seed: 11,
            parts,
            steps: 2,
            unequal_parts,
            part_factors: true,
            preamble_depends_on_range,
            shared_preamble,
        };
        let recorded = pce::record(WholeCircuit(chains(false, false))).unwrap();
        let want = synthesize(WholeCircuit(chains(false, false)), BufferSet::default()).unwrap();
        for shared in [false, true] {
            let fallbacks = pce::parted_fallbacks();
            let got = pool
                .install(|| {
                    synthesize_parted_with_pce(
                        &chains(false, shared),
                        &recorded,
                        BufferSet::default(),
                    )
                })
                .unwrap();
            assert_same_assignment(&want, &got);
            // Parts of equal size fill their windows, the preamble shared or not.
            assert_eq!(
                pce::parted_fallbacks() == fallbacks,
                !unequal_parts || parts == 1,
                "{parts} parts, unequal {unequal_parts}, shared preamble {shared}"
            );
        }

        // Same shape, but a part's preamble differs from the first one: an error, never a
        // witness stitched from two preambles.
        let moving = pool.install(|| {
            synthesize_parted_with_pce(&chains(true, false), &recorded, BufferSet::default())
        });
        match (parts, moving) {
            // One range only, or unequal parts synthesized whole on one thread: the preamble
            // is synthesized once, so the witness is the whole circuit's.
            (1, Ok(_)) => {}
            (_, Ok(_)) if unequal_parts => {}
            (_, Err(Groth16Error::ShapeMismatch(msg))) => {
                assert!(msg.contains("preamble"), "{msg}")
            }
            (_, other) => panic!(
                "{parts} parts, moving preamble: {:?}",
                other.map(|a| a.aux.len())
            ),
        }
    }
}

/// A PCE kept as a preamble and one part (`replicated`) is the whole recording once expanded,
/// gives the whole circuit's assignment (each part's columns shifted as the product reads
/// them), holds fewer bytes, and round-trips through a file; a layout that does not give its
/// counts is refused.
fn assert_repeated_pce_is_the_whole_circuit(
    chains: &Chains,
    replicated: &Pce,
    whole: &Pce,
    case: &str,
) {
    let Rows::Repeated(repeated) = &replicated.rows else {
        panic!("{case}: replicated but every row stored");
    };
    assert_eq!(&replicated.clone().into_flat(), whole, "{case}");
    assert_eq!(replicated.nonzeros(), whole.nonzeros(), "{case}");
    for which in 0..3 {
        let terms = |p: &Pce| {
            let mut all = Vec::new();
            p.for_each_term(which, |row, column, coeff| all.push((row, column, coeff)));
            all
        };
        assert_eq!(terms(replicated), terms(whole), "{case}: matrix {which}");
    }
    assert!(replicated.byte_size() < whole.byte_size(), "{case}");
    let want = synthesize(WholeCircuit(*chains), BufferSet::default()).unwrap();
    let got = synthesize_parted_with_pce(chains, replicated, BufferSet::default()).unwrap();
    assert_same_assignment(&want, &got);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parts.pce");
    pce::file::save(replicated, "key", &path).unwrap();
    assert_eq!(
        &pce::file::load(&path, "key").unwrap(),
        replicated,
        "{case}"
    );
    let mut more_parts = replicated.clone();
    more_parts.rows = Rows::Repeated(pce::Repeated {
        parts: repeated.parts + 1,
        ..repeated.clone()
    });
    assert!(
        more_parts.validate().unwrap_err().contains("layout"),
        "{case}"
    );
}

/// A circuit of alike parts is recorded from its preamble and one part, replicated; any other
/// (parts of unequal size, parts with coefficients of their own, too few parts) constraint by
/// constraint. Either way the recording is exactly the whole circuit's.
#[test]
fn a_circuit_of_alike_parts_is_recorded_from_one_part_as_the_whole_circuit_is() {
    for parts in [1, 2, 3, 8] {
        for (unequal_parts, part_factors) in [(false, false), (false, true), (true, false)] {
            let chains = Chains {
                seed: 3,
                parts,
                steps: 2,
                unequal_parts,
                part_factors,
                preamble_depends_on_range: false,
                shared_preamble: false,
            };
            let case =
                format!("{parts} parts, unequal {unequal_parts}, own factors {part_factors}");
            let whole = pce::record(WholeCircuit(chains)).unwrap();
            let replicated = pce::replicate_parts(&chains).unwrap();
            let alike = !unequal_parts && !part_factors;
            assert_eq!(replicated.is_some(), parts >= 3 && alike, "{case}");
            if let Some(replicated) = replicated {
                assert_repeated_pce_is_the_whole_circuit(&chains, &replicated, &whole, &case);
            }
            let recorded = pce::record_parted(chains).unwrap();
            assert_eq!(recorded.into_flat(), whole, "{case}");
            // The parameter generator reads a kept part's terms as the whole circuit's.
            let params = |parted: bool| {
                let no_progress = &|_, _| {};
                if parted {
                    paramgen::generate_parted(chains, &mut rng(7), no_progress).unwrap()
                } else {
                    paramgen::generate(WholeCircuit(chains), &mut rng(7), no_progress).unwrap()
                }
            };
            assert!(params(true) == params(false), "{case}: parameters differ");
        }
    }

    // Parts alike but for the last one, which is longer: recorded whole.
    struct LastPartLonger(usize);
    impl PartedCircuit for LastPartLonger {
        type Preamble = ();
        fn parts(&self) -> usize {
            self.0
        }
        fn synthesize_parts<CS: bellperson::ConstraintSystem<Scalar>>(
            &self,
            cs: &mut CS,
            parts: std::ops::Range<usize>,
        ) -> Result<(), bellperson::SynthesisError> {
            for part in parts {
                for _ in 0..1 + usize::from(part + 1 == self.0) {
                    let v = cs.alloc(|| "v", || Ok(Scalar::from(1u64)))?;
                    cs.enforce(|| "v", |l| l + v, |l| l + CS::one(), |l| l + v);
                }
            }
            Ok(())
        }
    }
    let whole = pce::record(WholeCircuit(LastPartLonger(5))).unwrap();
    assert!(pce::replicate_parts(&LastPartLonger(5)).unwrap().is_none());
    let recorded = pce::record_parted(LastPartLonger(5)).unwrap();
    assert!(matches!(recorded.rows, Rows::Flat(_)));
    assert_eq!(recorded, whole);
}
