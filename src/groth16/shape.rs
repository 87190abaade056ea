//! The size of one circuit instance, known before it is synthesized (from its parameter file
//! or a first measurement), and the bytes each part of a proof of it holds. The engine's budget
//! charges these figures up front and `cuzk plan` prints the same ones.

use serde::Serialize;

use super::msm;

/// Bytes of one scalar (Montgomery or canonical form).
pub const SCALAR_BYTES: u64 = 32;

/// Constraints, public inputs and private (aux) variables of one circuit instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CircuitShape {
    /// Constraints, input constraints included (an upper bound is fine: the domain counts).
    pub constraints: usize,
    /// Public inputs, the constant ONE included.
    pub inputs: usize,
    /// Private variables.
    pub aux: usize,
}

impl CircuitShape {
    /// The evaluation domain: the next power of two at or above the constraint count.
    pub fn domain(&self) -> usize {
        self.constraints.max(1).next_power_of_two()
    }

    /// One buffer set (a, b, c and aux; see `BufferSet`) that holds the whole domain: the CPU
    /// prover extends a, b and c to the domain in place, so a smaller set would grow outside
    /// the budget, and aux gets the same capacity.
    pub fn set_bytes(&self) -> u64 {
        4 * SCALAR_BYTES * self.domain() as u64
    }

    /// What a synthesized partition holds besides its buffer set: the inputs, the three
    /// density bitmaps (a word per 64 variables), and any aux beyond the set's capacity.
    pub fn assignment_bytes(&self) -> u64 {
        let words = |bits: usize| bits.div_ceil(64) as u64 * 8;
        let aux_overflow = self.aux.saturating_sub(self.domain()) as u64;
        SCALAR_BYTES * (self.inputs as u64 + aux_overflow)
            + 2 * words(self.aux)
            + words(self.inputs)
    }

    /// Host memory the CPU prover allocates for one partition beyond the assignment and its
    /// buffer set, at its peak, with `threads` threads proving it. From `prove_start` to the
    /// end it holds a canonical copy of aux (the set goes back to the pool at the end of
    /// `prove_start`). Beside it, in `prove_start`, the twiddle table (m/2), the canonical h
    /// scalars (m - 1) and h's MSM scratch (a task's digits, sorted order and buckets a
    /// thread: about 41 MB a thread at 32 GiB); in `prove_finish` the gathered A and B
    /// scalars (at most inputs + aux each) and the MSMs' scratch (pointer lists and
    /// Pippenger buckets).
    pub fn cpu_transient_bytes(&self, threads: usize) -> u64 {
        let m = self.domain() as u64;
        let (inputs, aux) = (self.inputs as u64, self.aux as u64);
        let start = SCALAR_BYTES * (m / 2 + m) + msm::msm_g1_scratch_bytes(m as usize, threads);
        let variables = (aux + inputs) as usize;
        let finish =
            SCALAR_BYTES * 2 * (aux + inputs) + msm::msm_bits_scratch_bytes(variables, threads);
        SCALAR_BYTES * aux + start.max(finish)
    }

    /// [`CircuitShape::cpu_transient_bytes`] with the threads of this process's thread pool,
    /// which the CPU prover runs on.
    pub fn cpu_transient_bytes_here(&self) -> u64 {
        self.cpu_transient_bytes(rayon::current_num_threads())
    }

    /// Host memory the GPU prover allocates for one partition beyond the assignment and its
    /// buffer set: a/b/c, aux and the inputs go to the device, and what stays on the host are
    /// bitmaps read back or uploaded beside them (a word and a 4-byte prefix count per 64
    /// scalars: the three density maps' prefixes, one MSM's bit split at a time), bounded here
    /// by half a byte a variable or domain point, plus the inputs staged for upload and 64 KiB
    /// for the small rest. At 32 GiB PoRep that is 64 MiB, against the CPU prover's 11.7 GiB.
    pub fn gpu_transient_bytes(&self) -> u64 {
        let n = (self.domain() as u64).max(self.aux as u64 + self.inputs as u64);
        n / 2 + SCALAR_BYTES * self.inputs as u64 + (64 << 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_32g_porep_partition_costs_what_the_design_says() {
        // 130,278,541 constraints; aux of the same order (4 GiB of scalars).
        let shape = CircuitShape {
            constraints: 130_278_541,
            inputs: 329,
            aux: 134_000_000,
        };
        assert_eq!(shape.domain(), 1 << 27);
        // a/b/c 12 GiB, aux 4 GiB (aux gets the domain's capacity).
        assert_eq!(shape.set_bytes(), 16 << 30);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        // Inputs and densities only: aux is in the set.
        assert!((0.03..0.06).contains(&gib(shape.assignment_bytes())));
        // Canonical aux (4 GiB) beside twiddles and h (6 GiB), or beside the gathered A and B
        // (8 GiB) with the bit-aware MSMs' pointer lists (2 GiB) and Pippenger buckets (at
        // most 24 bytes a G2 point: 3 GiB) however many threads share them.
        let one = shape.cpu_transient_bytes(1);
        assert!((15.0..16.0).contains(&gib(one)), "{}", gib(one));
        assert_eq!(shape.cpu_transient_bytes(64), one);
        // h's MSM holds digits, a sorted order and buckets a thread (41 MB at 4M points a
        // task): past about 140 threads that outgrows the finish.
        let many = shape.cpu_transient_bytes(192);
        assert!((18.5..19.0).contains(&gib(many)), "{}", gib(many));
        // On a GPU only bitmaps (half a byte a domain point, the domain being larger than
        // aux) and the inputs stay on the host: 64 MiB.
        assert_eq!(
            shape.gpu_transient_bytes(),
            (1 << 27) / 2 + 329 * 32 + (64 << 10)
        );
    }

    #[test]
    fn aux_beyond_the_domain_is_charged_to_the_assignment() {
        let fits = CircuitShape {
            constraints: 1000,
            inputs: 1,
            aux: 1024,
        };
        let over = CircuitShape { aux: 1124, ..fits };
        assert_eq!(
            over.assignment_bytes() - fits.assignment_bytes(),
            100 * SCALAR_BYTES + 2 * 8 * 2 // 100 scalars; 2 more bitmap words, twice
        );
    }
}
