//! supraseal-c2 as a baseline on the GPU (feature `supraseal`): the same assignments proved
//! by supraseal's `generate_groth16_proofs` with the same r and s, for `gpu/vs-supraseal` and
//! as a second opinion on the GPU backend's bytes.

use std::path::Path;

use blstrs::{G1Affine, G2Affine, Scalar};
use group::prime::PrimeCurveAffine;

use crate::groth16::{Assignment, Proof, Randomness};

/// supraseal's view of one assignment (pointers into `a`, which must outlive it).
fn view(a: &Assignment) -> supraseal_c2::Assignment<Scalar> {
    // Density words are u64 little-endian bit vectors, what supraseal reads as `usize` words.
    let words = |d: &crate::groth16::Density| d.words().as_ptr() as *const usize;
    supraseal_c2::Assignment {
        a_aux_density: words(&a.a_aux_density),
        a_aux_bit_len: a.a_aux_density.len(),
        a_aux_popcount: a.a_aux_density.count_ones(),
        b_inp_density: words(&a.b_input_density),
        b_inp_bit_len: a.b_input_density.len(),
        b_inp_popcount: a.b_input_density.count_ones(),
        b_aux_density: words(&a.b_aux_density),
        b_aux_bit_len: a.b_aux_density.len(),
        b_aux_popcount: a.b_aux_density.count_ones(),
        a: a.abc.a.as_ptr(),
        b: a.abc.b.as_ptr(),
        c: a.abc.c.as_ptr(),
        abc_size: a.abc.len(),
        inp_assignment_data: a.inputs.as_ptr(),
        inp_assignment_size: a.inputs.len(),
        aux_assignment_data: a.aux.as_ptr(),
        aux_assignment_size: a.aux.len(),
    }
}

/// The proof layout supraseal writes (bellperson's `#[repr(C)]` proof: A, B, C affine).
#[repr(C)]
#[derive(Clone, Copy)]
struct RawProof {
    a: G1Affine,
    b: G2Affine,
    c: G1Affine,
}

/// supraseal-c2 with one parameter file loaded (into its own pinned host memory).
pub struct Supraseal {
    srs: supraseal_c2::SRS,
}

impl Supraseal {
    /// Loads `params` (a bellperson `.params` file).
    pub fn load(params: &Path) -> anyhow::Result<Self> {
        let srs = supraseal_c2::SRS::try_new(params.to_path_buf(), false).map_err(|e| {
            anyhow::anyhow!("supraseal SRS {}: {}", params.display(), String::from(e))
        })?;
        Ok(Self { srs })
    }

    /// Proves every assignment (all of one circuit) with the given (r, s) in one call.
    pub fn prove(
        &self,
        assignments: &[Assignment],
        randomness: &[Randomness],
    ) -> anyhow::Result<Vec<Proof>> {
        anyhow::ensure!(
            assignments.len() == randomness.len(),
            "one (r, s) per assignment"
        );
        let views: Vec<_> = assignments.iter().map(view).collect();
        let r: Vec<Scalar> = randomness.iter().map(|x| x.r).collect();
        let s: Vec<Scalar> = randomness.iter().map(|x| x.s).collect();
        let empty = RawProof {
            a: G1Affine::identity(),
            b: G2Affine::identity(),
            c: G1Affine::identity(),
        };
        let mut out = vec![empty; assignments.len()];
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            supraseal_c2::generate_groth16_proofs(&views, &r, &s, &mut out, &self.srs)
        }))
        .map_err(|_| anyhow::anyhow!("supraseal-c2 failed"))?;
        Ok(out
            .into_iter()
            .map(|p| Proof {
                a: p.a,
                b: p.b,
                c: p.c,
            })
            .collect())
    }
}
