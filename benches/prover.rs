//! `prover` group: our CPU backend (synthesis + prove) against bellperson's
//! `create_proof_batch` (synthesis + prove) on the same circuits, parameters and (r, s);
//! and the CPU quotient's seven transforms with the vector arithmetic against blst's scalar
//! arithmetic on the same vectors.

mod common;

use std::sync::Arc;

use bellperson::groth16::{create_proof_batch, Parameters};
use bellperson::Circuit;
use blstrs::{Bls12, Scalar};
use common::{interleaved, named, report, selected};
use cuzk::groth16::ntt::Domain;
use cuzk::groth16::paramgen;
use cuzk::groth16::test_circuits::{RandomCircuit, Sha256Preimage, Shape};
use cuzk::groth16::{synthesize, BufferSet, CpuBackend, ProverBackend, Randomness, Srs};
use rand::SeedableRng;

fn case<C: Circuit<Scalar> + Clone + Send>(name: &str, blank: C, circuit: C, runs: usize) {
    if !selected(name) {
        return;
    }
    eprintln!("{name}: generating parameters");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let params: Parameters<Bls12> = paramgen::generate(blank, &mut rng, &|_, _| {}).unwrap();
    let srs = Arc::new(Srs::from_parameters(&params));
    let randomness = Randomness::random(&mut rng);
    let ours = || {
        let asg = synthesize(circuit.clone(), BufferSet::default()).unwrap();
        CpuBackend.prove(asg, &srs, randomness).unwrap()
    };
    let base = || {
        create_proof_batch::<Bls12, _, _>(
            vec![circuit.clone()],
            &params,
            vec![randomness.r],
            vec![randomness.s],
        )
        .unwrap()
        .remove(0)
    };
    assert_eq!(ours().to_bellperson(), base(), "{name}: proofs differ");
    let (o, b) = interleaved(
        runs,
        || {
            std::hint::black_box(ours());
        },
        || {
            std::hint::black_box(base());
        },
    );
    report(&format!("prover/{name}"), o, Some(b), runs, "");
}

/// The quotient (a·b − c)/z's seven transforms on random vectors of 2^log scalars, as the CPU
/// prover runs them: the domain as detected (AVX-512 IFMA where the CPU has it) against the
/// same domain on blst's scalar arithmetic. Both must give the same coefficients.
fn quotient_case(name: &str, log: u32, runs: usize) {
    if !selected(name) {
        return;
    }
    use ff::Field;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(log as u64);
    let domain = Domain::for_size(1 << log).unwrap();
    let vectors: Vec<Vec<Scalar>> = (0..3)
        .map(|_| {
            (0..domain.size())
                .map(|_| Scalar::random(&mut rng))
                .collect()
        })
        .collect();
    let quotient = |domain: &Domain| {
        let [mut a, mut b, mut c]: [Vec<Scalar>; 3] = vectors.clone().try_into().unwrap();
        for v in [&mut a, &mut b, &mut c] {
            domain.coset_evaluations(v);
        }
        domain.mul_sub(&mut a, &b, &c);
        domain.coefficients_from_coset(&mut a, domain.z_on_coset_inv());
        a
    };
    let scalar = domain.clone().with_scalar_arithmetic();
    assert_eq!(
        quotient(&domain),
        quotient(&scalar),
        "{name}: quotients differ"
    );
    let (o, b) = interleaved(
        runs,
        || {
            std::hint::black_box(quotient(&domain));
        },
        || {
            std::hint::black_box(quotient(&scalar));
        },
    );
    report(
        &format!("prover/{name}"),
        o,
        Some(b),
        runs,
        &format!("ifma={}", domain.uses_ifma()),
    );
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    for (name, log, runs) in [("n16", 16u32, 7usize), ("n18", 18, 5), ("n20", 20, 3)] {
        // Fill the domain 2^log without spilling over: circuit constraints + input constraints.
        let constraints = (1usize << log) - 8;
        let circuit = RandomCircuit::new(Shape::Mixed, constraints, 42);
        case(name, circuit.clone(), circuit, runs);
    }
    let len = Sha256Preimage::len_for_blocks(9);
    case(
        "sha256",
        Sha256Preimage {
            len,
            preimage: None,
        },
        Sha256Preimage::with_seed(len, 7),
        5,
    );
    quotient_case("quotient-20", 20, 5);
    quotient_case("quotient-22", 22, 3);
    // Two tiled passes above the block, 3 GiB of vectors: only when named.
    if named("quotient-24") {
        quotient_case("quotient-24", 24, 3);
    }
}
