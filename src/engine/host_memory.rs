//! The engine's memory budget as the [`HostMemory`] a backend takes extra host memory from:
//! a GPU backend is charged its own small host transients per partition, and takes the CPU
//! prover's only for a partition it hands to the CPU after a device failure. Taken only when
//! it fits the budget, given back when that partition is finished or dropped.

use std::sync::Weak;

use super::Inner;
use crate::groth16::HostMemory;

/// The budget of one engine, held weakly: a backend that outlives its engine holds nothing
/// of it, and its grants then take nothing (there is no budget left to keep).
pub(super) struct EngineBudget(pub(super) Weak<Inner>);

impl HostMemory for EngineBudget {
    /// Charges `bytes` when they fit the whole budget. A fallback is rare and short, so it
    /// may use the headroom lower classes keep free for CRITICAL work.
    fn try_take(&self, bytes: u64) -> bool {
        let Some(inner) = self.0.upgrade() else {
            return true;
        };
        let mut st = inner.lock();
        let fits = st.budget.fits(bytes);
        if fits {
            st.budget.charge(bytes);
        }
        fits
    }

    /// Releases `bytes` and wakes the workers that wait for memory.
    fn give_back(&self, bytes: u64) {
        let Some(inner) = self.0.upgrade() else {
            return;
        };
        let mut st = inner.lock();
        st.budget.release(bytes);
        inner.unlock(st);
    }
}
