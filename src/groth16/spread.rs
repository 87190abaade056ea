//! Several backends behind one: each partition goes to the member with the fewest partitions
//! in flight (between `prove_start` and the end of `prove_finish`), so an engine with several
//! GPUs keeps them all busy. Members are independent: each keeps its own resident SRS,
//! streams and locks, and a partition is finished on the member that started it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{
    AbcBuffers, Assignment, Groth16Error, Proof, ProverBackend, Randomness, Result, Srs, Started,
};

/// A backend that spreads partitions over `members`.
pub struct Spread<B> {
    members: Vec<B>,
    /// Partitions between start and finish, per member.
    in_flight: Vec<AtomicUsize>,
    /// Partitions started, per member (for status and tests).
    started: Vec<AtomicUsize>,
}

/// Pending work of a [`Spread`]: the member that started it and that member's pending work.
pub struct SpreadPending<P> {
    member: usize,
    pending: P,
}

impl<B: ProverBackend> Spread<B> {
    /// Spreads over `members` (at least one).
    pub fn new(members: Vec<B>) -> Result<Self> {
        if members.is_empty() {
            return Err(Groth16Error::InvalidParams(
                "a spread backend needs at least one member".into(),
            ));
        }
        let counters = || members.iter().map(|_| AtomicUsize::new(0)).collect();
        Ok(Self {
            in_flight: counters(),
            started: counters(),
            members,
        })
    }

    /// The members, in the order given.
    pub fn members(&self) -> &[B] {
        &self.members
    }

    /// How many partitions each member has started.
    pub fn started_per_member(&self) -> Vec<usize> {
        self.started
            .iter()
            .map(|c| c.load(Ordering::SeqCst))
            .collect()
    }

    /// The member with the fewest partitions in flight (the first such on ties), with its
    /// count already raised so concurrent callers spread out.
    fn claim(&self) -> usize {
        loop {
            let (member, seen) = self
                .in_flight
                .iter()
                .map(|c| c.load(Ordering::SeqCst))
                .enumerate()
                .min_by_key(|&(i, n)| (n, i))
                .expect("at least one member");
            if self.in_flight[member]
                .compare_exchange(seen, seen + 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return member;
            }
        }
    }

    fn release(&self, member: usize) {
        self.in_flight[member].fetch_sub(1, Ordering::SeqCst);
    }
}

impl<B: ProverBackend> ProverBackend for Spread<B> {
    type Pending = SpreadPending<B::Pending>;

    fn name(&self) -> String {
        let names: Vec<String> = self.members.iter().map(|m| m.name()).collect();
        names.join("+")
    }

    fn prove_start(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> Result<Started<Self::Pending>> {
        let member = self.claim();
        self.started[member].fetch_add(1, Ordering::SeqCst);
        match self.members[member].prove_start(assignment, srs, randomness) {
            Ok(Started { pending, released }) => Ok(Started {
                pending: SpreadPending { member, pending },
                released,
            }),
            Err(e) => {
                self.release(member);
                Err(e)
            }
        }
    }

    fn prove_finish(&self, pending: Self::Pending) -> Result<Proof> {
        let SpreadPending { member, pending } = pending;
        let result = self.members[member].prove_finish(pending);
        self.release(member);
        result
    }

    /// Buffers from the first member: pinned host memory is usable by every device of the
    /// process (unified addressing makes page-locked allocations portable).
    fn alloc_buffers(&self, constraints: usize) -> AbcBuffers {
        self.members[0].alloc_buffers(constraints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::test_circuits::{RandomCircuit, Shape};
    use crate::groth16::{paramgen, synthesize, verify, CpuBackend};
    use rand::SeedableRng;

    #[test]
    fn partitions_go_to_the_least_busy_member_and_match_a_single_backend() {
        let circuit = RandomCircuit::new(Shape::Mixed, 200, 3);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let params = paramgen::generate(circuit.clone(), &mut rng, &|_, _| {}).unwrap();
        let srs = Arc::new(Srs::from_parameters(&params));
        let spread = Spread::new(vec![CpuBackend, CpuBackend, CpuBackend]).unwrap();
        assert_eq!(spread.name(), "cpu+cpu+cpu");

        // Three partitions started before any finishes land on three members; the fourth,
        // started after the second member finished, goes to it.
        let r: Vec<Randomness> = (0..4).map(|_| Randomness::random(&mut rng)).collect();
        let start = |k: usize| {
            let asg = synthesize(circuit.clone(), AbcBuffers::default()).unwrap();
            spread.prove_start(asg, &srs, r[k]).unwrap().pending
        };
        let p0 = start(0);
        let p1 = start(1);
        let p2 = start(2);
        assert_eq!(
            [p0.member, p1.member, p2.member],
            [0, 1, 2],
            "one partition per member"
        );
        let proof1 = spread.prove_finish(p1).unwrap();
        let p3 = start(3);
        assert_eq!(p3.member, 1, "the idle member takes the next partition");
        assert_eq!(spread.started_per_member(), vec![1, 2, 1]);

        // Every proof is the one a single backend makes with the same r and s, and verifies.
        let proofs = [
            spread.prove_finish(p0).unwrap(),
            proof1,
            spread.prove_finish(p2).unwrap(),
            spread.prove_finish(p3).unwrap(),
        ];
        for (k, proof) in proofs.iter().enumerate() {
            let single = CpuBackend
                .prove(
                    synthesize(circuit.clone(), AbcBuffers::default()).unwrap(),
                    &srs,
                    r[k],
                )
                .unwrap();
            assert_eq!(proof.to_bytes(), single.to_bytes(), "partition {k}");
            assert!(verify(&srs, proof, &circuit.public_inputs()));
        }
        assert!(spread
            .in_flight
            .iter()
            .all(|c| c.load(Ordering::SeqCst) == 0));
    }

    #[test]
    fn a_failed_start_frees_its_member_and_an_empty_spread_is_refused() {
        assert!(Spread::<CpuBackend>::new(vec![]).is_err());
        let circuit = RandomCircuit::new(Shape::Mixed, 100, 4);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
        let params = paramgen::generate(circuit.clone(), &mut rng, &|_, _| {}).unwrap();
        let srs = Arc::new(Srs::from_parameters(&params));
        // A circuit too large for the SRS fails prove_start on the chosen member.
        let big = RandomCircuit::new(Shape::Mixed, 4000, 4);
        let spread = Spread::new(vec![CpuBackend, CpuBackend]).unwrap();
        let asg = synthesize(big, AbcBuffers::default()).unwrap();
        assert!(spread
            .prove_start(asg, &srs, Randomness::random(&mut rng))
            .is_err());
        assert!(spread
            .in_flight
            .iter()
            .all(|c| c.load(Ordering::SeqCst) == 0));
        // The next partition still goes to the first member and proves.
        let asg = synthesize(circuit.clone(), AbcBuffers::default()).unwrap();
        let started = spread
            .prove_start(asg, &srs, Randomness::random(&mut rng))
            .unwrap();
        assert_eq!(started.pending.member, 0);
        let proof = spread.prove_finish(started.pending).unwrap();
        assert!(verify(&srs, &proof, &circuit.public_inputs()));
    }
}
