//! Device memory one partition takes on a GPU, and what a device must hold beside it: the
//! figures the CUDA backend admits partitions by (one at a time when two do not fit beside the
//! parameters) and `cuzk plan` reports per GPU. Plain arithmetic, built with or without CUDA.

/// Bytes of a scalar (a/b/c, aux and the gathered A and B scalars on the device).
const SCALAR: u64 = 32;

/// The share of a device's memory the driver, the context and allocation granularity are
/// assumed to take; the rest is what partitions and parameters may use.
pub fn usable_device_bytes(total: u64) -> u64 {
    total - total / 50
}

/// Bytes of a G2 affine point on the device (the largest point a gather chunk holds).
const G2_POINT: u64 = 192;

/// sppark's per-call scratch in an MSM (the scalars' window digits and a scalar-sized
/// temporary): about 11.5 bytes a point at 2^27 with 18-bit windows.
const SPPARK_BYTES_PER_POINT: u64 = 12;

/// Device bytes one partition holds or allocates from `prove_start` to the end of
/// `prove_finish`: its buffers ([`partition_buffer_bytes`]) and sppark's per-call scratch for
/// its largest MSM. About 19.7 GB for a 32 GiB PoRep partition.
pub fn partition_device_bytes(
    domain: usize,
    aux: usize,
    inputs: usize,
    a_len: usize,
    b_len: usize,
    split_chunk: usize,
) -> u64 {
    let largest = domain.max(aux).max(a_len).max(b_len) as u64;
    partition_buffer_bytes(domain, aux, inputs, a_len, b_len, split_chunk)
        + largest * SPPARK_BYTES_PER_POINT
}

/// Device bytes of the buffers the backend takes for one partition: a/b/c over the domain,
/// aux and the inputs; A's and B's gathered scalars (held in b's and c's place once the
/// quotient no longer needs them, so counted only when longer than the domain); the bit
/// split's maps for l, a and b (sizes differ, so the pool may keep each); and a gather chunk
/// of "other" scalars with a buffer for as many points of the larger group (one buffer serves
/// G1 and G2 chunks). About 18.1 GB for a 32 GiB PoRep partition.
pub fn partition_buffer_bytes(
    domain: usize,
    aux: usize,
    inputs: usize,
    a_len: usize,
    b_len: usize,
    split_chunk: usize,
) -> u64 {
    let own_place = |len: usize| if len <= domain { 0 } else { len };
    let held = (3 * domain + aux + inputs + own_place(a_len) + own_place(b_len)) as u64 * SCALAR;
    let maps: u64 = [aux, a_len, b_len]
        .iter()
        .map(|&n| (n as u64).div_ceil(64) * MAP_BYTES_PER_WORD)
        .sum();
    let largest = domain.max(aux).max(a_len).max(b_len) as u64;
    let gather = largest.min(split_chunk as u64) * (SCALAR + G2_POINT);
    held + maps + gather
}

/// Bytes of the bit split's maps per 64 scalars: a word of ones, a word of others and a
/// 4-byte prefix count.
const MAP_BYTES_PER_WORD: u64 = 20;

/// sppark's MSM state kept per device for MSMs of `points` (the G1 and G2 `msm_t` buckets and
/// histograms): about 1.2 GB from 2^26 points, proportionally less below.
pub fn msm_state_bytes(points: usize) -> u64 {
    ((1_200_000_000u128 * points.min(1 << 26) as u128) >> 26) as u64
}

/// Points a streamed MSM copies to the device at a time: each of its two windows holds that
/// many G2 points (0.8 GB).
pub const STREAM_CHUNK: usize = 1 << 22;

/// Device bytes of the two windows a streamed MSM copies chunks through (one chunk's MSM runs
/// while the next is copied), each sized for a chunk of G2 points, the largest.
pub fn stream_window_bytes(chunk: usize) -> u64 {
    2 * chunk as u64 * G2_POINT
}

/// How a circuit's partitions use a device of `device_bytes` (see [`gpu_fit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuFitOfCircuit {
    /// Partitions on the device at once: 0 (not even one), 1 (one at a time: the next
    /// partition's `prove_start` waits for this one's `prove_finish`) or 2 (the pipeline: one
    /// starting while another finishes).
    pub at_once: usize,
    /// Bytes of the parameters that do not fit beside one partition, streamed from the host
    /// at each of its MSMs (0 when all are resident).
    pub streamed_bytes: u64,
}

/// How partitions of (`domain`, `aux`, `inputs`) use a device of `device_bytes` with
/// `srs_bytes` of parameters: two at once when both fit beside all the parameters, or beside
/// all but a few that are streamed when that pays ([`streamed_to_hold_two`]); else one at a
/// time, with the parameters that do not fit beside it streamed from the host; else none.
/// A and B are counted with every variable, an upper bound.
pub fn gpu_fit(
    device_bytes: u64,
    srs_bytes: u64,
    domain: usize,
    aux: usize,
    inputs: usize,
) -> GpuFitOfCircuit {
    let one = partition_device_bytes(domain, aux, inputs, inputs + aux, inputs + aux, SPLIT_CHUNK);
    let usable = usable_device_bytes(device_bytes);
    let fixed = msm_state_bytes(domain.max(aux + inputs));
    if srs_bytes + fixed + 2 * one <= usable {
        return GpuFitOfCircuit {
            at_once: 2,
            streamed_bytes: 0,
        };
    }
    let room_for_two = usable.saturating_sub(
        fixed + 2 * one + density_map_bytes(aux, inputs) + pair_headroom_bytes(usable),
    );
    if let Some(streamed) = streamed_to_hold_two(
        srs_bytes,
        room_for_two,
        stream_window_bytes(STREAM_CHUNK),
        upload_bytes(domain, aux, inputs),
    ) {
        return GpuFitOfCircuit {
            at_once: 2,
            streamed_bytes: streamed,
        };
    }
    let room = usable.saturating_sub(fixed + one);
    if srs_bytes <= room {
        return GpuFitOfCircuit {
            at_once: 1,
            streamed_bytes: 0,
        };
    }
    let window = stream_window_bytes(STREAM_CHUNK);
    if room < window {
        return GpuFitOfCircuit {
            at_once: 0,
            streamed_bytes: srs_bytes,
        };
    }
    GpuFitOfCircuit {
        at_once: 1,
        streamed_bytes: srs_bytes - (room - window).min(srs_bytes),
    }
}

/// Bytes of the parameters to stream so that two partitions fit on the device at once, when
/// that pays: `room` is what the device has for parameters beside two partitions (and the rest
/// it holds), and `upload` what one partition copies to the device. Two partitions at once let
/// the next one's copies and NTTs run under this one's MSMs, hiding at least its `upload`
/// bytes of host-to-device copies; streaming costs the streamed bytes over the same link at
/// each partition. So it pays while the streamed bytes are at most half the upload (a margin
/// for what a GPU run has not yet measured). None when it does not pay or the room cannot
/// hold the streaming window; never 0 (all parameters fitting is not streaming).
pub fn streamed_to_hold_two(srs_bytes: u64, room: u64, window: u64, upload: u64) -> Option<u64> {
    let kept = room.checked_sub(window)?;
    let streamed = srs_bytes.saturating_sub(kept);
    (streamed > 0 && streamed <= upload / 2).then_some(streamed)
}

/// Device memory kept free beside two partitions held at once by streaming parameters, a 64th
/// of what is usable: room for a CRITICAL partition to start without waiting for one of the
/// two (a 32 GiB WinningPoSt partition with its parameters takes about 0.4 GB; an 80 GB GPU
/// keeps 1.3 GB).
pub fn pair_headroom_bytes(usable: u64) -> u64 {
    usable / 64
}

/// Device bytes of a circuit's density maps kept with its resident parameters: for A's aux
/// variables, B's inputs and B's aux variables, a word and a 4-byte prefix count per 64 (about
/// 49 MB at 32 GiB PoRep).
pub fn density_map_bytes(aux: usize, inputs: usize) -> u64 {
    (2 * aux.div_ceil(64) + inputs.div_ceil(64)) as u64 * 12
}

/// Bytes one partition copies to the device: a, b and c over the domain, aux and the inputs
/// (about 17 GB at 32 GiB PoRep).
pub fn upload_bytes(domain: usize, aux: usize, inputs: usize) -> u64 {
    (3 * domain + aux + inputs) as u64 * SCALAR
}

/// Most "other" scalars one split MSM gathers at a time (with their points), unless a check
/// sets another: bounds its scratch to 2^22 scalars and points (about 0.5 GB on G1, 0.9 GB on
/// G2).
pub const SPLIT_CHUNK: usize = 1 << 22;

#[cfg(test)]
mod tests {
    use super::*;

    /// 32 GiB PoRep (`proofs/production.rs`): 47.4 GB of parameters, a 2^27 domain.
    const POREP_32G: (u64, usize, usize, usize) = (47_373_927_744, 1 << 27, 130_169_893, 328);

    #[test]
    fn a_32g_porep_partition_takes_about_20_gb_an_80_gb_gpu_holds_two_streaming_7_gb_and_24_gb_streams(
    ) {
        let (srs, domain, aux, inputs) = POREP_32G;
        let one =
            partition_device_bytes(domain, aux, inputs, aux + inputs, aux + inputs, SPLIT_CHUNK);
        assert!((19_000_000_000..20_500_000_000).contains(&one), "{one}");
        // A's and B's scalars take b's and c's place: 3 scalars a constraint plus aux, not 5.
        let buffers =
            partition_buffer_bytes(domain, aux, inputs, aux + inputs, aux + inputs, SPLIT_CHUNK);
        let abc_and_aux = (3 * domain + aux + inputs) as u64 * SCALAR;
        assert!(buffers - abc_and_aux < 1_200_000_000, "{buffers}");
        let h100 = 85_899_345_920; // 80 GiB
        let h200 = 150_000_000_000; // 139.7 GiB
        let rtx = 25_769_803_776; // 24 GiB
        let fit = |device| gpu_fit(device, srs, domain, aux, inputs);
        // 80 GiB: two partitions are 3.8 GB short beside all the parameters; streaming about
        // 7 GB of them (under half of the 17 GB a partition uploads) holds two, with the
        // headroom for a CRITICAL partition left free.
        let upload = upload_bytes(domain, aux, inputs);
        assert!(
            (16_900_000_000..17_200_000_000).contains(&upload),
            "{upload}"
        );
        let h100_fit = fit(h100);
        assert_eq!(h100_fit.at_once, 2, "{h100_fit:?}");
        assert!(
            (5_000_000_000..=upload / 2).contains(&h100_fit.streamed_bytes),
            "{h100_fit:?}"
        );
        let usable = usable_device_bytes(h100);
        let kept = srs - h100_fit.streamed_bytes;
        let maps = density_map_bytes(aux, inputs);
        let window = stream_window_bytes(STREAM_CHUNK);
        let fixed = msm_state_bytes(domain);
        assert_eq!(
            kept + window + maps + fixed + 2 * one + pair_headroom_bytes(usable),
            usable,
            "the kept parameters fill the room beside two partitions exactly"
        );
        // The headroom holds a 32 GiB WinningPoSt partition (2^19 domain) with its 184 MiB of
        // parameters and density maps.
        let (w_aux, w_inputs) = (375_210, 133);
        let winning = partition_device_bytes(
            1 << 19,
            w_aux,
            w_inputs,
            w_aux + w_inputs,
            w_aux + w_inputs,
            SPLIT_CHUNK,
        ) + (184 << 20)
            + density_map_bytes(w_aux, w_inputs)
            + msm_state_bytes(1 << 19);
        assert!(winning < pair_headroom_bytes(usable), "{winning}");
        assert_eq!(
            fit(h200),
            GpuFitOfCircuit {
                at_once: 2,
                streamed_bytes: 0
            }
        );
        // 24 GiB holds one partition, a streaming window and a few GB of the parameters;
        // the rest (about 44 GB) is streamed from the host at each partition's MSMs.
        let rtx = fit(rtx);
        assert_eq!(rtx.at_once, 1, "{rtx:?}");
        assert!(
            (40_000_000_000..srs).contains(&rtx.streamed_bytes),
            "{rtx:?}"
        );
        // 16 GiB: not even one partition.
        assert_eq!(fit(17_179_869_184).at_once, 0);
        // 48 GiB: holding two would stream 40 GB, more than a partition's upload: one at a
        // time.
        assert_eq!(fit(48 << 30).at_once, 1);
        // 32 GiB WindowPoSt: 57 GiB of parameters fit beside a partition on 80 GiB, and
        // holding two would stream 20 GB (more than half its upload): one at a time; on a GPU
        // of 80e9 bytes about 4.4 GB of them are streamed.
        let window = |device| gpu_fit(device, 57 << 30, 1 << 27, 126_902_376, 25_840);
        assert_eq!(
            window(h100),
            GpuFitOfCircuit {
                at_once: 1,
                streamed_bytes: 0
            }
        );
        let small = window(80_000_000_000);
        assert_eq!(small.at_once, 1);
        assert!(
            (3_000_000_000..6_000_000_000).contains(&small.streamed_bytes),
            "{small:?}"
        );
    }

    #[test]
    fn streaming_to_hold_two_pays_up_to_half_the_upload() {
        // room 10, window 2: 8 kept.
        assert_eq!(streamed_to_hold_two(12, 10, 2, 8), Some(4));
        assert_eq!(streamed_to_hold_two(13, 10, 2, 8), None, "5 > 8 / 2");
        assert_eq!(streamed_to_hold_two(8, 10, 2, 8), None, "nothing streamed");
        assert_eq!(
            streamed_to_hold_two(9, 1, 2, 100),
            None,
            "no room for the window"
        );
    }

    #[test]
    fn msm_state_grows_with_the_points_up_to_2_26() {
        assert_eq!(msm_state_bytes(1 << 26), 1_200_000_000);
        assert_eq!(msm_state_bytes(1 << 27), 1_200_000_000);
        assert_eq!(msm_state_bytes(1 << 25), 600_000_000);
    }
}
