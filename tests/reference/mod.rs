//! What the GPU-emulated tests compare a proof with: bellperson's `create_proof` for the same
//! circuit, parameters, r and s, byte for byte, and bellperson's verifier on our parameters.
//! Each test binary uses some of these helpers.
#![allow(dead_code)]

use std::sync::{Arc, Weak};

use bellperson::groth16::{create_proof, Parameters};
use bellperson::Circuit;
use blstrs::{Bls12, Scalar};
use cuzk::groth16::paramgen;
use cuzk::groth16::test_circuits::{RandomCircuit, Sha256Preimage, Shape};
use cuzk::groth16::{verify, Proof, Randomness, Srs};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// bellperson's proof of one circuit with one r and s, and what verifies it.
pub struct Reference {
    bytes: Vec<u8>,
    /// Not kept alive by the reference: tests drop the parameters to see what that frees.
    srs: Weak<Srs>,
    inputs: Vec<Scalar>,
}

impl Reference {
    /// bellperson's proof of `circuit` (public inputs `inputs`) with `params` and
    /// `randomness`; proofs are verified against `srs` (the same parameters).
    pub fn new<C: Circuit<Scalar> + Send>(
        circuit: C,
        params: &Parameters<Bls12>,
        srs: &Arc<Srs>,
        randomness: Randomness,
        inputs: Vec<Scalar>,
    ) -> Self {
        let theirs = create_proof::<Bls12, _, _>(circuit, params, randomness.r, randomness.s)
            .expect("bellperson proves the circuit");
        let mut bytes = Vec::new();
        theirs.write(&mut bytes).expect("a proof serializes");
        Self {
            bytes,
            srs: Arc::downgrade(srs),
            inputs,
        }
    }

    /// Panics, naming `what`, unless `proof` is bellperson's byte for byte and verifies.
    pub fn check(&self, proof: &Proof, what: &str) {
        assert_eq!(
            proof.to_bytes().to_vec(),
            self.bytes,
            "{what}: not bellperson's proof"
        );
        let srs = self
            .srs
            .upgrade()
            .expect("the parameters outlive the checks");
        assert!(verify(&srs, proof, &self.inputs), "{what}: does not verify");
    }
}

/// A one-block SHA-256 preimage circuit (nearly every witness value a bit, as in Filecoin's
/// circuits, so split MSMs do real work), its parameters, an r and s, and bellperson's proof.
pub struct Sha256Case {
    pub circuit: Sha256Preimage,
    pub srs: Arc<Srs>,
    pub randomness: Randomness,
    pub reference: Reference,
}

impl Sha256Case {
    /// Parameters from `seed`, the preimage from `seed + 1`, r and s from `seed + 2`.
    pub fn new(seed: u64) -> Self {
        let len = Sha256Preimage::len_for_blocks(1);
        let blank = Sha256Preimage {
            len,
            preimage: None,
        };
        let circuit = Sha256Preimage::with_seed(len, seed + 1);
        let randomness = Randomness::random(&mut ChaCha20Rng::seed_from_u64(seed + 2));
        let (srs, reference) = srs_and_reference(
            blank,
            seed,
            circuit.clone(),
            randomness,
            circuit.public_inputs(),
        );
        Self {
            circuit,
            srs,
            randomness,
            reference,
        }
    }
}

/// A random circuit of `constraints` (Mixed), its parameters from `seed` as an SRS, and
/// bellperson's proof of it with `randomness`.
pub fn random_case(
    constraints: usize,
    seed: u64,
    randomness: Randomness,
) -> (RandomCircuit, Arc<Srs>, Reference) {
    let circuit = RandomCircuit::new(Shape::Mixed, constraints, seed);
    let (srs, reference) = srs_and_reference(
        circuit.clone(),
        seed,
        circuit.clone(),
        randomness,
        circuit.public_inputs(),
    );
    (circuit, srs, reference)
}

/// Parameters of `blank` from `seed` as an SRS, and bellperson's proof of `circuit` (public
/// inputs `inputs`) with them and `randomness`.
fn srs_and_reference<B, C>(
    blank: B,
    seed: u64,
    circuit: C,
    randomness: Randomness,
    inputs: Vec<Scalar>,
) -> (Arc<Srs>, Reference)
where
    B: Circuit<Scalar> + Send,
    C: Circuit<Scalar> + Send,
{
    let params = paramgen::generate(blank, &mut ChaCha20Rng::seed_from_u64(seed), &|_, _| {})
        .expect("parameters generate");
    let srs = Arc::new(Srs::from_parameters(&params));
    let reference = Reference::new(circuit, &params, &srs, randomness, inputs);
    (srs, reference)
}
