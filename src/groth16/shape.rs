//! The size of one circuit instance, known before it is synthesized (from its parameter file
//! or a first measurement), and the bytes each part of a proof of it holds. The engine's budget
//! charges these figures up front and `cuzk plan` prints the same ones.

use serde::Serialize;

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

    /// One a/b/c buffer set that holds the whole domain (the CPU prover extends a, b and c to
    /// the domain in place, so a smaller set would grow outside the budget).
    pub fn abc_bytes(&self) -> u64 {
        3 * SCALAR_BYTES * self.domain() as u64
    }

    /// What a synthesized partition holds besides a/b/c: inputs, aux and the three density
    /// bitmaps (a word per 64 variables).
    pub fn assignment_bytes(&self) -> u64 {
        let words = |bits: usize| bits.div_ceil(64) as u64 * 8;
        SCALAR_BYTES * (self.inputs + self.aux) as u64 + 2 * words(self.aux) + words(self.inputs)
    }

    /// Host memory the CPU prover allocates for one partition beyond the assignment, at its
    /// peak: in `prove_start` the twiddle table (m/2) and the canonical h scalars (m - 1); in
    /// `prove_finish` canonical copies of aux and the gathered A and B scalars (at most
    /// inputs + aux each). The larger of the two is held from `prove_start` to `prove_finish`.
    pub fn cpu_transient_bytes(&self) -> u64 {
        let m = self.domain() as u64;
        let start = SCALAR_BYTES * (m / 2 + m);
        let finish = SCALAR_BYTES * (3 * self.aux as u64 + 2 * self.inputs as u64);
        start.max(finish)
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
        assert_eq!(shape.abc_bytes(), 12 << 30);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        assert!((3.9..4.1).contains(&gib(shape.assignment_bytes())));
        assert!((11.0..16.0).contains(&gib(shape.cpu_transient_bytes())));
    }
}
