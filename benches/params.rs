//! `params` group: our random-parameter generator against bellperson's
//! `generate_random_parameters` on Filecoin's 2 KiB WinningPoSt circuit, and ours alone on the
//! 2 KiB PoRep circuit (bellperson takes ~18 minutes there).

mod common;

use bellperson::groth16::generate_random_parameters;
use bellperson::Circuit;
use blstrs::{Bls12, Scalar};
use common::{interleaved, report, selected, time_ms};
use cuzk::groth16::{paramgen, PartedCircuit};
use cuzk::proofs::circuits::{BlankCircuitVisitor, CircuitKind};
use rand::SeedableRng;

/// Generates with ours only, once.
struct OursOnce(Option<f64>);

impl BlankCircuitVisitor for OursOnce {
    fn visit<C: Circuit<Scalar>>(&mut self, circuit: C) {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let (ms, params) = time_ms(|| paramgen::generate(circuit, &mut rng, &|_, _| {}));
        params.expect("parameter generation");
        self.0 = Some(ms);
    }
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    if selected("winning-2k") {
        let kind = CircuitKind::parse("winning-2k").unwrap();
        let runs = 2;
        let mut ours_rng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
        let mut base_rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        let (o, b) = interleaved(
            runs,
            || kind.visit_blank(&mut Ours { rng: &mut ours_rng }).unwrap(),
            || {
                kind.visit_blank(&mut Bellperson { rng: &mut base_rng })
                    .unwrap()
            },
        );
        report("params/winning-2k", o, Some(b), runs, "");
    }
    if selected("porep-2k") {
        let mut v = OursOnce(None);
        CircuitKind::parse("porep-2k")
            .unwrap()
            .visit_blank(&mut v)
            .unwrap();
        report("params/porep-2k", v.0.unwrap(), None, 1, "");
    }
}

struct Ours<'a> {
    rng: &'a mut rand_chacha::ChaCha20Rng,
}

impl BlankCircuitVisitor for Ours<'_> {
    fn visit<C: Circuit<Scalar>>(&mut self, circuit: C) {
        paramgen::generate(circuit, self.rng, &|_, _| {}).expect("ours");
    }

    fn visit_parted<P: PartedCircuit>(&mut self, circuit: P) {
        paramgen::generate_parted(circuit, self.rng, &|_, _| {}).expect("ours");
    }
}

struct Bellperson<'a> {
    rng: &'a mut rand_chacha::ChaCha20Rng,
}

impl BlankCircuitVisitor for Bellperson<'_> {
    fn visit<C: Circuit<Scalar>>(&mut self, circuit: C) {
        generate_random_parameters::<Bls12, _, _>(circuit, self.rng).expect("bellperson");
    }
}
