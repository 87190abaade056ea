//! Several backends behind one: each partition goes to the member with the fewest partitions
//! in flight (between `prove_start` and the end of `prove_finish`), so an engine with several
//! GPUs keeps them all busy. Members are independent: each keeps its own resident SRS,
//! streams and locks, and a partition is finished on the member that started it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{
    Assignment, BufferSet, CircuitShape, Groth16Error, HostMemory, Proof, ProverBackend,
    Randomness, Result, Srs, Started,
};

/// A backend that spreads partitions over `members`.
pub struct Spread<B> {
    members: Vec<B>,
    /// Partitions between start and finish, per member (decremented by [`Claim`]'s drop, so
    /// errors, panics and dropped pending work all give the slot back).
    in_flight: Vec<Arc<AtomicUsize>>,
    /// Device errors from `prove_start` in a row, per member (input errors do not count):
    /// part of its load when choosing, so a member that keeps failing (a broken device) stops
    /// attracting the work; reset on success.
    failing: Vec<AtomicUsize>,
    /// Partitions started, per member (for status and tests).
    started: Vec<AtomicUsize>,
}

/// The most that failures add to a member's load: a device that failed is still tried once
/// the others have this many partitions in flight, so one that recovered gets work again.
const MAX_FAILURE_LOAD: usize = 4;

/// One partition's slot on a member; released when dropped.
struct Claim(Arc<AtomicUsize>);

impl Drop for Claim {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Pending work of a [`Spread`]: the member that started it, that member's pending work, and
/// its slot on the member.
pub struct SpreadPending<P> {
    member: usize,
    pending: P,
    _claim: Claim,
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
            in_flight: members
                .iter()
                .map(|_| Arc::new(AtomicUsize::new(0)))
                .collect(),
            failing: counters(),
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

    /// The member with the least load (partitions in flight plus failures in a row, its own
    /// and those it absorbed with a CPU fallback; the first such on ties), with its in-flight
    /// count already raised so concurrent callers spread out.
    fn claim(&self) -> (usize, Claim) {
        loop {
            let (member, seen) = self
                .in_flight
                .iter()
                .zip(&self.failing)
                .zip(&self.members)
                .map(|((n, f), m)| {
                    // The member's own count and ours may see the same failure: take the larger.
                    let failures = f.load(Ordering::SeqCst).max(m.failures_in_a_row());
                    (n.load(Ordering::SeqCst), failures.min(MAX_FAILURE_LOAD))
                })
                .enumerate()
                .min_by_key(|&(i, (n, f))| (n.saturating_add(f), i))
                .map(|(i, (n, _))| (i, n))
                .expect("at least one member");
            let slot = &self.in_flight[member];
            if slot
                .compare_exchange(seen, seen + 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return (member, Claim(Arc::clone(slot)));
            }
        }
    }
}

impl<B: ProverBackend> ProverBackend for Spread<B> {
    type Pending = SpreadPending<B::Pending>;

    /// The members' names; devices of one kind are listed once ("cuda:0,1,2").
    fn name(&self) -> String {
        let names: Vec<String> = self.members.iter().map(|m| m.name()).collect();
        let mut out: Vec<String> = Vec::new();
        let mut last_kind: Option<String> = None;
        for name in names {
            match name.split_once(':') {
                Some((kind, id)) if last_kind.as_deref() == Some(kind) => {
                    if let Some(prev) = out.last_mut() {
                        prev.push(',');
                        prev.push_str(id);
                    }
                }
                Some((kind, _)) => {
                    last_kind = Some(kind.to_string());
                    out.push(name);
                }
                None => {
                    last_kind = None;
                    out.push(name);
                }
            }
        }
        out.join("+")
    }

    fn prove_start(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> Result<Started<Self::Pending>> {
        let (member, claim) = self.claim();
        match self.members[member].prove_start(assignment, srs, randomness) {
            Ok(Started { pending, released }) => {
                self.failing[member].store(0, Ordering::SeqCst);
                self.started[member].fetch_add(1, Ordering::SeqCst);
                Ok(Started {
                    pending: SpreadPending {
                        member,
                        pending,
                        _claim: claim,
                    },
                    released,
                })
            }
            Err(e) => {
                if matches!(e, Groth16Error::Device(_)) {
                    self.failing[member].fetch_add(1, Ordering::SeqCst);
                }
                Err(e)
            }
        }
    }

    fn prove_finish(&self, pending: Self::Pending) -> Result<Proof> {
        let SpreadPending {
            member,
            pending,
            _claim,
        } = pending;
        self.members[member].prove_finish(pending)
    }

    fn lanes(&self) -> usize {
        self.members.len()
    }

    /// The most any member allocates: a partition may go to any of them.
    fn transient_bytes(&self, shape: &CircuitShape) -> u64 {
        self.members
            .iter()
            .map(|m| m.transient_bytes(shape))
            .max()
            .unwrap_or_else(|| shape.cpu_transient_bytes_here())
    }

    fn set_host_memory(&self, memory: Arc<dyn HostMemory>) {
        for member in &self.members {
            member.set_host_memory(Arc::clone(&memory));
        }
    }

    fn prefers_pinned(&self) -> bool {
        self.members[0].prefers_pinned()
    }

    fn failures_in_a_row(&self) -> usize {
        self.members
            .iter()
            .zip(&self.failing)
            .map(|(m, f)| m.failures_in_a_row().max(f.load(Ordering::SeqCst)))
            .min()
            .unwrap_or(0)
    }

    fn lane(&self, pending: &Self::Pending) -> usize {
        pending.member
    }

    fn device_busy_ms(&self) -> Vec<(String, f64)> {
        self.members
            .iter()
            .flat_map(|m| m.device_busy_ms())
            .collect()
    }

    /// Buffers from the first member: pinned host memory is usable by every device of the
    /// process (unified addressing makes page-locked allocations portable).
    fn alloc_buffers(&self, constraints: usize) -> BufferSet {
        self.members[0].alloc_buffers(constraints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::test_circuits::{RandomCircuit, Shape};
    use crate::groth16::{paramgen, synthesize, verify, CpuBackend};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// A random circuit of `constraints` constraints (witness `seed`), parameters for it, and
    /// a generator seeded with `rng_seed` (which made the parameters).
    fn fixture(
        constraints: usize,
        seed: u64,
        rng_seed: u64,
    ) -> (RandomCircuit, Arc<Srs>, ChaCha20Rng) {
        let circuit = RandomCircuit::new(Shape::Mixed, constraints, seed);
        let mut rng = ChaCha20Rng::seed_from_u64(rng_seed);
        let params = paramgen::generate(circuit.clone(), &mut rng, &|_, _| {}).unwrap();
        (circuit, Arc::new(Srs::from_parameters(&params)), rng)
    }

    #[test]
    fn partitions_go_to_the_least_busy_member_and_match_a_single_backend() {
        let (circuit, srs, mut rng) = fixture(200, 3, 1);
        let spread = Spread::new(vec![CpuBackend, CpuBackend, CpuBackend]).unwrap();
        assert_eq!(spread.name(), "cpu+cpu+cpu");
        assert_eq!(spread.lanes(), 3);

        // Three partitions started before any finishes land on three members; the fourth,
        // started after the second member finished, goes to it.
        let r: Vec<Randomness> = (0..4).map(|_| Randomness::random(&mut rng)).collect();
        let start = |k: usize| {
            let asg = synthesize(circuit.clone(), BufferSet::default()).unwrap();
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
        assert_eq!(spread.lane(&p3), 1);
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
                    synthesize(circuit.clone(), BufferSet::default()).unwrap(),
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
        let (circuit, srs, mut rng) = fixture(100, 4, 2);
        // A circuit too large for the SRS fails prove_start on the chosen member.
        let big = RandomCircuit::new(Shape::Mixed, 4000, 4);
        let spread = Spread::new(vec![CpuBackend, CpuBackend]).unwrap();
        let asg = synthesize(big, BufferSet::default()).unwrap();
        assert!(spread
            .prove_start(asg, &srs, Randomness::random(&mut rng))
            .is_err());
        assert!(spread
            .in_flight
            .iter()
            .all(|c| c.load(Ordering::SeqCst) == 0));
        // An input error says nothing about the device: the next partition goes to the first
        // member again.
        let asg = synthesize(circuit.clone(), BufferSet::default()).unwrap();
        let started = spread
            .prove_start(asg, &srs, Randomness::random(&mut rng))
            .unwrap();
        assert_eq!(started.pending.member, 0);
        let proof = spread.prove_finish(started.pending).unwrap();
        assert!(verify(&srs, &proof, &circuit.public_inputs()));
    }

    #[test]
    fn device_errors_move_work_to_the_other_members_up_to_a_cap() {
        let (circuit, srs, mut rng) = fixture(100, 6, 4);
        let spread = Spread::new(vec![named("cuda:0", 0), named("cuda:1", 0)]).unwrap();
        let mut start = || {
            let asg = synthesize(circuit.clone(), BufferSet::default()).unwrap();
            spread.prove_start(asg, &srs, Randomness::random(&mut rng))
        };
        // A device error on member 0 (chosen on the tie) counts against it.
        spread.members()[0].broken.store(true, Ordering::SeqCst);
        assert!(matches!(start(), Err(Groth16Error::Device(_))));
        assert_eq!(spread.failing[0].load(Ordering::SeqCst), 1);
        // After five in a row (the history is set here) its load counts as 4, the cap: member
        // 1 takes four partitions, then member 0 is tried again, succeeds and is healthy.
        spread.members()[0].broken.store(false, Ordering::SeqCst);
        spread.failing[0].store(5, Ordering::SeqCst);
        let pending: Vec<_> = (0..5).map(|_| start().unwrap().pending).collect();
        let members: Vec<usize> = pending.iter().map(|p| p.member).collect();
        assert_eq!(members, vec![1, 1, 1, 1, 0]);
        assert_eq!(spread.failing[0].load(Ordering::SeqCst), 0);
        for p in pending {
            let proof = spread.prove_finish(p).unwrap();
            assert!(verify(&srs, &proof, &circuit.public_inputs()));
        }
    }

    /// The CPU backend under another name, reporting `failures` device failures in a row,
    /// and failing every start with a device error while `broken`.
    struct Named {
        name: &'static str,
        failures: usize,
        broken: std::sync::atomic::AtomicBool,
    }

    fn named(name: &'static str, failures: usize) -> Named {
        Named {
            name,
            failures,
            broken: Default::default(),
        }
    }

    impl ProverBackend for Named {
        type Pending = <CpuBackend as ProverBackend>::Pending;
        fn name(&self) -> String {
            self.name.into()
        }
        fn failures_in_a_row(&self) -> usize {
            self.failures
        }
        fn prove_start(
            &self,
            assignment: Assignment,
            srs: &Arc<Srs>,
            randomness: Randomness,
        ) -> Result<Started<Self::Pending>> {
            if self.broken.load(Ordering::SeqCst) {
                return Err(Groth16Error::Device("broken on purpose".into()));
            }
            CpuBackend.prove_start(assignment, srs, randomness)
        }
        fn prove_finish(&self, pending: Self::Pending) -> Result<Proof> {
            CpuBackend.prove_finish(pending)
        }
    }

    #[test]
    fn names_list_devices_of_one_kind_once() {
        let name = |names: Vec<&'static str>| {
            Spread::new(names.into_iter().map(|n| named(n, 0)).collect())
                .unwrap()
                .name()
        };
        assert_eq!(name(vec!["cuda:0", "cuda:1", "cuda:3"]), "cuda:0,1,3");
        assert_eq!(name(vec!["cuda:0", "cpu", "cuda:2"]), "cuda:0+cpu+cuda:2");
        assert_eq!(name(vec!["cuda:7"]), "cuda:7");
    }

    #[test]
    fn a_member_that_keeps_failing_gets_work_only_when_the_others_are_loaded() {
        let (circuit, srs, mut rng) = fixture(100, 5, 3);
        // Member 0 reports two device failures in a row (absorbed by its CPU fallback).
        let spread = Spread::new(vec![named("cuda:0", 2), named("cuda:1", 0)]).unwrap();
        // Partitions stay in flight until all four have started.
        let pending: Vec<_> = (0..4)
            .map(|_| {
                let asg = synthesize(circuit.clone(), BufferSet::default()).unwrap();
                spread
                    .prove_start(asg, &srs, Randomness::random(&mut rng))
                    .unwrap()
                    .pending
            })
            .collect();
        let members: Vec<usize> = pending.iter().map(|p| p.member).collect();
        // Loads: (2, 0) -> 1; (2, 1) -> 1; (2, 2) -> 0 (tie, first); (3, 2) -> 1.
        assert_eq!(members, vec![1, 1, 0, 1]);
        assert_eq!(spread.failures_in_a_row(), 0, "member 1 is healthy");
        for p in pending {
            let proof = spread.prove_finish(p).unwrap();
            assert!(verify(&srs, &proof, &circuit.public_inputs()));
        }
    }
}
