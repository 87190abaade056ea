//! Which job of a class starts its next synthesis first.
//!
//! The provers take synthesized partitions in (class, job) order, so within a class jobs run
//! first in, first out. Synthesis must keep up at the switch from one job to the next: when a
//! job whose partitions synthesize quickly (a 32 GiB SnapDeals partition) is followed by one
//! whose partitions take longer (a 32 GiB PoRep partition), FIFO starts the slow partitions only
//! when the quick job has nothing left to start, and the provers then wait for them with every
//! worker busy. On a node whose GPUs are its bottleneck that wait cost ~9% of its rate.
//!
//! So each job's next partition gets a latest start: when the provers will reach it (the
//! prover time of every partition of the class ahead of it, spread over the lanes) minus its
//! synthesis time, both from what the engine measured for its parameter set. Jobs start in
//! order of that time, FIFO on ties. A job of one kind never passes an earlier job of the same
//! kind (its latest start is later), so only a slower kind starts early, and only as early as
//! it must.
//!
//! Parameter affinity (NORMAL and LOW work): while the newest parameter set of the class's jobs
//! was loaded less than the affinity time ago, a job whose set is not resident goes after the
//! jobs whose sets are. On a node where only one of the 32 GiB PoRep (47 GB) and SnapDeals
//! (35 GB) sets fits, alternating jobs in FIFO reload a set at every job; with affinity the
//! sets switch at most once per affinity time, however deep the backlog, and no job waits
//! much longer than that for its set.
//!
//! Nothing here changes which partition the provers take next, what is charged, or the order
//! of classes.

use super::workload::JobId;

/// Weight of a new measurement in the running estimates.
const NEW_WEIGHT: f64 = 0.25;

/// Running estimates of one parameter set's partitions: synthesis time and the time its
/// `prove_start` and `prove_finish` take together. Empty until measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimeEstimates {
    synth_ms: Option<f64>,
    prove_ms: Option<f64>,
}

impl TimeEstimates {
    /// Adds a synthesis's measured time.
    pub fn note_synth(&mut self, ms: f64) {
        self.synth_ms = Some(blend(self.synth_ms, ms));
    }

    /// Adds a partition's measured `prove_start` plus `prove_finish` time.
    pub fn note_prove(&mut self, ms: f64) {
        self.prove_ms = Some(blend(self.prove_ms, ms));
    }

    /// (synthesis, prove) ms, once both were measured.
    pub fn estimates(&self) -> Option<(f64, f64)> {
        Some((self.synth_ms?, self.prove_ms?))
    }
}

fn blend(old: Option<f64>, new: f64) -> f64 {
    let new = if new.is_finite() { new.max(0.0) } else { 0.0 };
    old.map_or(new, |old| old + NEW_WEIGHT * (new - old))
}

/// One live job of a class, as the lookahead sees it.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub id: JobId,
    /// Partitions not yet picked for synthesis.
    pub queued: usize,
    /// Partitions picked and not yet finished.
    pub in_flight: usize,
    /// Its parameter set's estimates (None: not measured yet).
    pub times: Option<(f64, f64)>,
    /// Whether its parameters are resident: only then may it start before earlier jobs
    /// (starting it early loads nothing and evicts nothing).
    pub resident: bool,
}

/// The jobs of one class with partitions to start, in the order their next synthesis should
/// start. `jobs` holds the class's live jobs in FIFO order, those with only partitions in
/// flight included (the provers do their work first); `lanes` is the number of devices that
/// prove in parallel. With `hold_unloaded` (affinity), jobs whose parameters are not resident
/// come last, in FIFO order. The rest are ordered by latest start, which needs an estimate for
/// every job; without one they stay FIFO.
pub fn order(jobs: &[Candidate], lanes: usize, hold_unloaded: bool) -> Vec<JobId> {
    let (now, later): (Vec<Candidate>, Vec<Candidate>) = jobs
        .iter()
        .partition(|j| j.queued == 0 || j.resident || !hold_unloaded);
    let mut order = by_latest_start(&now, lanes);
    order.extend(later.iter().map(|j| j.id));
    order
}

/// `jobs` (in FIFO order) with queued partitions, ordered by their next partition's latest
/// start; FIFO without an estimate for every job.
fn by_latest_start(jobs: &[Candidate], lanes: usize) -> Vec<JobId> {
    let fifo = || jobs.iter().filter(|j| j.queued > 0).map(|j| j.id).collect();
    let Some(times) = jobs.iter().map(|j| j.times).collect::<Option<Vec<_>>>() else {
        return fifo();
    };
    let lanes = lanes.max(1) as f64;
    let mut ahead_ms = 0.0;
    let mut latest_so_far = f64::NEG_INFINITY;
    let mut keyed = Vec::new();
    for (job, (synth_ms, prove_ms)) in jobs.iter().zip(times) {
        let per_partition = prove_ms / lanes;
        let reached_at = ahead_ms + job.in_flight as f64 * per_partition;
        ahead_ms += (job.in_flight + job.queued) as f64 * per_partition;
        if job.queued == 0 {
            continue;
        }
        let mut latest_start = reached_at - synth_ms;
        if !job.resident {
            latest_start = latest_start.max(latest_so_far);
        }
        latest_so_far = latest_so_far.max(latest_start);
        keyed.push((latest_start, job.id));
    }
    // Stable: FIFO among equal times.
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    keyed.into_iter().map(|(_, id)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: u64, queued: usize, in_flight: usize, times: (f64, f64)) -> Candidate {
        Candidate {
            id: JobId(id),
            queued,
            in_flight,
            times: Some(times),
            resident: true,
        }
    }

    fn ids(order: Vec<JobId>) -> Vec<u64> {
        order.into_iter().map(|id| id.0).collect()
    }

    const QUICK: (f64, f64) = (100.0, 10.0);
    const SLOW: (f64, f64) = (400.0, 20.0);

    #[test]
    fn a_slower_job_starts_once_the_work_ahead_is_shorter_than_the_synthesis_it_needs() {
        // The quick job's 12 partitions (queued or in flight) keep one lane busy 120 ms; the
        // slow job's first partition needs 400 ms of synthesis: it must start now.
        let jobs = [job(1, 8, 4, QUICK), job(2, 10, 0, SLOW)];
        assert_eq!(ids(order(&jobs, 1, false)), [2, 1]);
        // With 40 quick partitions ahead (400 ms of proving) it is not late yet.
        let jobs = [job(1, 36, 4, QUICK), job(2, 10, 0, SLOW)];
        assert_eq!(ids(order(&jobs, 1, false)), [1, 2]);
        // Two lanes prove the quick partitions twice as fast: the 40 take 200 ms.
        let jobs = [job(1, 36, 4, QUICK), job(2, 10, 0, SLOW)];
        assert_eq!(ids(order(&jobs, 2, false)), [2, 1]);
    }

    #[test]
    fn jobs_of_one_kind_stay_first_in_first_out() {
        let jobs = [job(1, 3, 2, SLOW), job(2, 10, 0, SLOW), job(3, 10, 0, SLOW)];
        assert_eq!(ids(order(&jobs, 1, false)), [1, 2, 3]);
        // A quick job after slow ones never starts before them.
        let jobs = [job(1, 3, 2, SLOW), job(2, 10, 0, QUICK)];
        assert_eq!(ids(order(&jobs, 1, false)), [1, 2]);
    }

    #[test]
    fn work_in_flight_of_a_job_with_nothing_queued_counts_as_ahead() {
        // Job 2 has nothing left to start but 30 partitions (600 ms) still to prove.
        let jobs = [
            job(1, 1, 0, QUICK),
            job(2, 0, 30, SLOW),
            job(3, 10, 0, SLOW),
        ];
        assert_eq!(ids(order(&jobs, 1, false)), [1, 3]);
        let jobs = [job(1, 1, 0, QUICK), job(2, 0, 3, SLOW), job(3, 10, 0, SLOW)];
        assert_eq!(ids(order(&jobs, 1, false)), [3, 1]);
    }

    #[test]
    fn without_every_estimate_or_with_parameters_to_load_the_order_is_fifo() {
        let mut unmeasured = job(2, 10, 0, SLOW);
        unmeasured.times = None;
        assert_eq!(
            ids(order(&[job(1, 8, 4, QUICK), unmeasured], 1, false)),
            [1, 2]
        );
        let mut not_resident = job(2, 10, 0, SLOW);
        not_resident.resident = false;
        assert_eq!(
            ids(order(&[job(1, 8, 4, QUICK), not_resident], 1, false)),
            [1, 2]
        );
        // A later resident job may still pass both.
        let jobs = [
            job(1, 8, 4, QUICK),
            not_resident,
            job(3, 5, 0, (5000.0, 20.0)),
        ];
        assert_eq!(ids(order(&jobs, 1, false)), [3, 1, 2]);
    }

    #[test]
    fn held_for_affinity_a_job_whose_parameters_must_be_loaded_goes_after_resident_ones() {
        let porep = |id| job(id, 10, 0, SLOW);
        // Timed like PoRep, so that only the affinity reorders; its parameters not resident.
        let snap = |id| Candidate {
            resident: false,
            ..job(id, 16, 0, SLOW)
        };
        let jobs = [porep(1), snap(2), porep(3), snap(4), porep(5)];
        assert_eq!(ids(order(&jobs, 1, true)), [1, 3, 5, 2, 4]);
        // Without estimates too.
        let unmeasured = jobs.map(|j| Candidate { times: None, ..j });
        assert_eq!(ids(order(&unmeasured, 1, true)), [1, 3, 5, 2, 4]);
        // Not held (the sets were loaded longer than the affinity time ago): FIFO.
        assert_eq!(ids(order(&jobs, 1, false)), [1, 2, 3, 4, 5]);
        assert_eq!(ids(order(&unmeasured, 1, false)), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn estimates_are_running_averages_of_what_was_measured() {
        let mut t = TimeEstimates::default();
        assert_eq!(t.estimates(), None);
        t.note_synth(100.0);
        assert_eq!(t.estimates(), None, "prove time not measured yet");
        t.note_prove(8.0);
        assert_eq!(t.estimates(), Some((100.0, 8.0)));
        t.note_synth(200.0);
        t.note_prove(f64::NAN);
        assert_eq!(t.estimates(), Some((125.0, 6.0)));
    }
}
