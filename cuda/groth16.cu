// cuzk CUDA kernels for the Groth16 prover over BLS12-381.
//
// Field and curve arithmetic, the NTT and the Pippenger MSM come from sppark's headers (the
// crates.io `sppark` crate, see docs/gpu.md). This file adds cuzk's own pieces: the quotient
// h = (a*b - c)/z on the coset, density gathering of scalars, and a C entry point per step.
//
// Ownership: Rust (the `cust` crate) owns the devices, contexts, streams and every buffer; the
// entry points here take raw device pointers and a raw stream. The one long-lived device memory
// here is the MSM state kept per device and size (msm_cache), which cuzk_cuda_msm_release
// frees. Every entry point catches all exceptions and reports errors as a code plus message.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>
#include <algorithm>

#include <ff/bls12-381-fp2.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;
typedef jacobian_t<fp2_t> point_fp2_t;
typedef xyzz_t<fp2_t> bucket_fp2_t;
typedef bucket_fp2_t::affine_t affine_fp2_t;
typedef fr_t scalar_t;

#include <msm/pippenger.cuh>
#include <msm/batch_addition.cuh>
#include <ntt/ntt.cuh>

// Points and buckets in memory (blst's layout, what the Rust side holds) have these sizes on
// host and device alike. The device's fp2_t is *not* a G2 coordinate: it is one lane's half of
// one (sppark splits G2 arithmetic over lane pairs), so device code indexes G2 memory through
// the mem_t types only, never through affine_fp2_t or bucket_fp2_t.
static_assert(sizeof(affine_t::mem_t) == 96, "G1 affine point in memory");
static_assert(sizeof(affine_fp2_t::mem_t) == 192, "G2 affine point in memory");
static_assert(sizeof(bucket_t::mem_t) == 192, "G1 xyzz bucket in memory");
static_assert(sizeof(bucket_fp2_t::mem_t) == 384, "G2 xyzz bucket in memory");

namespace {

// sppark's stream_t has no constructor from an existing stream; this view has its layout
// (checked below) so a stream owned by Rust can be handed to the NTT without being destroyed.
struct stream_view {
    cudaStream_t stream;
    int gpu_id;
};
static_assert(sizeof(stream_view) == sizeof(stream_t), "stream_t layout changed");

// Writes "what: message" into the caller's buffer and returns the code.
int report(int code, const char* what, const char* message, char* err, size_t err_len)
{
    if (err && err_len) snprintf(err, err_len, "%s: %s", what, message);
    return code ? code : -1;
}

// Runs `body`, turning CUDA errors and exceptions into a code + message. Also checks for
// asynchronous launch errors so a failed kernel is never silent.
template <typename F>
int guarded(const char* what, char* err, size_t err_len, F body)
{
    try {
        body();
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return report((int)e, what, cudaGetErrorString(e), err, err_len);
        return 0;
    } catch (const cuda_error& e) {
        // A failed runtime call stays the thread's "last error" until read: clear it, or the
        // next, unrelated check on this thread (ours or sppark's) would fail with it.
        (void)cudaGetLastError();
        return report(e.code(), what, e.what(), err, err_len);
    } catch (const std::exception& e) {
        (void)cudaGetLastError();
        return report(-1, what, e.what(), err, err_len);
    } catch (...) {
        (void)cudaGetLastError();
        return report(-1, what, "unknown exception", err, err_len);
    }
}

// Makes `ordinal` the current device and returns its index in sppark's GPU pool. The pool is
// built on first use (its constructor leaves device 0 current), so the pool is consulted first
// and the device selected after; a device sppark cannot use is an error, never another device.
int select_device(int ordinal)
{
    for (const gpu_t* gpu : all_gpus()) {
        if (gpu->cid() == ordinal) {
            CUDA_OK(cudaSetDevice(ordinal));
            return gpu->id();
        }
    }
    throw sppark_error(cudaErrorInvalidDevice,
                       "device " + std::to_string(ordinal) + " is not in sppark's GPU pool");
}

// sppark's NTT twiddle tables cover domains up to 2^28.
constexpr uint32_t max_lg = 28;

void check_lg(uint32_t lg)
{
    if (lg == 0 || lg > max_lg)
        throw sppark_error(cudaErrorInvalidValue,
                           "NTT domain 2^" + std::to_string(lg) + " is outside 2^1..2^28");
}

__global__ void zero_fill(fr_t* v, size_t from, size_t to)
{
    size_t i = from + (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < to) v[i].zero();
}

// a[i] = (a[i] * b[i] - c[i]) * z_inv: the quotient's coset evaluations.
__global__ void abc_to_h(fr_t* a, const fr_t* b, const fr_t* c, fr_t z_inv, size_t m)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        fr_t t = a[i] * b[i];
        t -= c[i];
        a[i] = t * z_inv;
    }
}

// out[prefix[w] + popcount(bits below i in word w)] = in[i] for every set bit i.
__global__ void gather_by_density(fr_t* out, const fr_t* in, const uint64_t* bits,
                                  const uint32_t* prefix, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t word = bits[i / 64];
    uint32_t bit = i % 64;
    if (!((word >> bit) & 1)) return;
    uint64_t below = bit ? (word & ((uint64_t(1) << bit) - 1)) : 0;
    out[prefix[i / 64] + __popcll(below)] = in[i];
}

// The bit split of an MSM (supraseal's idea, our code): most witness scalars are 0 or 1, so an
// MSM is split into the sum of the points whose scalar is 1 and a Pippenger over the rest.

// One scalar as raw 64-bit words (Montgomery form), to compare with 0 and 1 bit for bit.
struct raw_scalar {
    uint64_t w[4];
};

// Marks scalar i in ones (it is 1) or others (it is neither 0 nor 1), one thread per scalar and
// a warp vote per 32-bit half word. Launched over at least words*64 threads so every half
// word of both maps is written (indices at or past n vote no; past words*64 write nothing).
__global__ void classify_scalars(const fr_t* scalars, size_t n, raw_scalar one, uint32_t* ones,
                                 uint32_t* others)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    bool is_one = false, is_other = false;
    if (i < n) {
        const uint64_t* s = reinterpret_cast<const uint64_t*>(scalars) + 4 * i;
        uint64_t a = s[0], b = s[1], c = s[2], d = s[3];
        is_one = a == one.w[0] && b == one.w[1] && c == one.w[2] && d == one.w[3];
        is_other = !is_one && (a | b | c | d) != 0;
    }
    uint32_t one_votes = __ballot_sync(0xffffffffu, is_one);
    uint32_t other_votes = __ballot_sync(0xffffffffu, is_other);
    if ((threadIdx.x & 31) == 0 && i < (n + 63) / 64 * 64) {
        ones[i / 32] = one_votes;
        others[i / 32] = other_votes;
    }
}

// The position among the set bits of bit i (prefix[w]: set bits in words before w).
__device__ inline size_t rank_of(const uint64_t* bits, const uint32_t* prefix, size_t i)
{
    uint64_t word = bits[i / 64];
    uint32_t bit = i % 64;
    uint64_t below = bit ? (word & ((uint64_t(1) << bit) - 1)) : 0;
    return prefix[i / 64] + __popcll(below);
}

// A point's bytes as they lie in memory, copied whole by one thread (a G2 point cannot be
// moved through affine_fp2_t on the device: see the size checks above).
template <size_t bytes>
struct alignas(16) point_bytes {
    static_assert(bytes % 16 == 0, "points are whole 16-byte words");
    uint4 words[bytes / 16];
};
using g1_point_bytes = point_bytes<sizeof(affine_t::mem_t)>;
using g2_point_bytes = point_bytes<sizeof(affine_fp2_t::mem_t)>;

// For every set bit i whose rank r is in [lo, hi): out_scalars[r - lo] = scalars[i] and
// out_points[r - lo] = points[i]: one chunk of an MSM's "other" scalars and their points.
template <class point_in_memory>
__global__ void gather_chunk(fr_t* out_scalars, point_in_memory* out_points,
                             const fr_t* scalars, const point_in_memory* points,
                             const uint64_t* bits, const uint32_t* prefix, size_t n, size_t lo,
                             size_t hi)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !((bits[i / 64] >> (i % 64)) & 1)) return;
    size_t r = rank_of(bits, prefix, i);
    if (r < lo || r >= hi) return;
    out_scalars[r - lo] = scalars[i];
    out_points[r - lo] = points[i];
}

// Throws a RustError from sppark as an exception, freeing its message.
void check(RustError& r)
{
    if (r.code == 0) return;
    std::string message = r.message ? r.message : "sppark call failed";
    free(r.message);
    r.message = nullptr;
    throw sppark_error(r.code, message);
}

// Whether sppark's streams for pool device `pool` (the device's own and its flip-flop pair)
// finished their work without an error. Never throws; a failure is read and cleared.
bool streams_healthy(int pool)
{
    const gpu_t& gpu = select_gpu(pool);
    bool healthy = cudaStreamSynchronize((cudaStream_t)gpu) == cudaSuccess;
    for (size_t i = 0; i < gpu_t::FLIP_FLOP; i++)
        healthy &= cudaStreamSynchronize((cudaStream_t)gpu[i]) == cudaSuccess;
    if (!healthy) (void)cudaGetLastError();
    return healthy;
}

// One sppark msm_t per (pool device, curve, size class), kept between MSMs: building one costs
// a device allocation and a synchronisation, destroying it two synchronisations and a free,
// five times per partition otherwise. The size class is floor(log2(1.5 n)) clamped to 18..26,
// the range over which msm_t's Pippenger window (10..18 bits, from the same quantity) changes,
// so a kept object has the window the MSM would have chosen, and holds only its buckets and
// histogram: up to 15 x 2^17 buckets (about 0.4 GB on G1, 0.8 GB on G2). Points and scalars stay
// ours (device pointers are handed to invoke).
//
// An MSM takes its object out of the cache and puts it back when its streams are healthy, so
// msm_release never deletes an object in use. A destructor that throws (msm_t's synchronises
// with CUDA_OK) terminates the process: an object is deleted only right after its device's
// streams synchronised cleanly, and is otherwise leaked (a few hundred bytes of host memory;
// its device memory goes with the broken context).
class msm_cache {
  public:
    using key = std::tuple<int, int, int>;  // pool index, curve (1: G1, 2: G2), size class

    static int size_class(size_t n)
    {
        size_t rounded = (n + WARP_SZ - 1) & ~size_t(WARP_SZ - 1);  // as msm_t rounds n
        size_t v = rounded + rounded / 2;
        int lg = 0;
        while (v >>= 1) lg++;
        return lg < 18 ? 18 : (lg > 26 ? 26 : lg);
    }

    // An object for `k` (taken out of the cache, or built for `n` points of `affine_size`
    // bytes).
    template <class M>
    M* take(const key& k, size_t n, size_t affine_size)
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = kept_.find(k);
            if (it != kept_.end()) {
                void* kept = it->second;
                kept_.erase(it);
                return static_cast<M*>(kept);
            }
        }
        return new M(nullptr, n, affine_size, std::get<0>(k));
    }

    // Puts `msm` back when its device's streams are healthy; otherwise leaks it (see above).
    template <class M>
    void give(const key& k, M* msm)
    {
        if (!streams_healthy(std::get<0>(k))) return;
        void* extra = nullptr;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto inserted = kept_.emplace(k, msm);
            if (!inserted.second) extra = msm;
        }
        if (extra) delete static_cast<M*>(extra);
    }

    // Deletes the kept objects of pool device `pool` (their device memory goes back), or
    // leaks them when the device's streams are not healthy. Returns how many were dropped.
    template <class M1, class M2>
    size_t release(int pool)
    {
        std::map<key, void*> dropped;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (auto it = kept_.begin(); it != kept_.end();) {
                if (std::get<0>(it->first) == pool) {
                    dropped.insert(*it);
                    it = kept_.erase(it);
                } else {
                    ++it;
                }
            }
        }
        if (dropped.empty() || !streams_healthy(pool)) return dropped.size();
        for (auto& entry : dropped) {
            if (std::get<1>(entry.first) == 1)
                delete static_cast<M1*>(entry.second);
            else
                delete static_cast<M2*>(entry.second);
        }
        return dropped.size();
    }

  private:
    std::mutex mutex_;
    std::map<key, void*> kept_;
};

msm_cache& kept_msms()
{
    static msm_cache* cache = new msm_cache;  // never destroyed: no CUDA call at process exit
    return *cache;
}

using msm_g1_t = msm_t<bucket_t, point_t, affine_t, scalar_t>;
using msm_g2_t = msm_t<bucket_fp2_t, point_fp2_t, affine_fp2_t, scalar_t>;

// Whether a code from sppark is the device's out-of-memory error: its CUDA_OK throws the CUDA
// error negated (cuda_error{-code}), and invoke returns that code in its RustError.
bool out_of_memory(int code)
{
    return code == cudaErrorMemoryAllocation || code == -cudaErrorMemoryAllocation;
}

// Σ scalars[i]·points[i] with sppark's Pippenger over device-resident points and scalars, with
// a kept msm_t (see msm_cache). When the device is out of memory (building the object, or in
// invoke's scratch allocation), the device's kept objects are released and the MSM tried once
// more: what the cache holds must never be why an MSM fails.
template <class M, int curve, class point, class affine>
void msm_on_device(int ordinal, const void* d_points, const fr_t* d_scalars, size_t n, point& out)
{
    int pool = select_device(ordinal);
    if (n == 0) {
        out.inf();
        return;
    }
    msm_cache::key k{pool, curve, msm_cache::size_class(n)};
    auto make_room = [&] {
        (void)cudaGetLastError();
        kept_msms().release<msm_g1_t, msm_g2_t>(pool);
    };
    for (int attempt = 0;; attempt++) {
        M* msm = nullptr;
        try {
            msm = kept_msms().take<M>(k, n, sizeof(affine));
        } catch (const cuda_error& e) {
            if (!out_of_memory(e.code()) || attempt > 0) throw;
            make_room();
            continue;
        }
        RustError r{0};
        try {
            r = msm->invoke(out, dev_ptr_t<affine>((affine*)d_points, n), n,
                            dev_ptr_t<scalar_t>((scalar_t*)d_scalars, n), true);
        } catch (...) {
            kept_msms().give(k, msm);
            throw;
        }
        kept_msms().give(k, msm);
        if (out_of_memory(r.code) && attempt == 0) {
            free(r.message);
            make_room();
            continue;
        }
        check(r);
        return;
    }
}

// The stream the split's kernels run on: sppark's own stream for the device, the one its MSMs
// use, so a split MSM is ordered like a plain one (callers serialise MSMs of one device).
cudaStream_t split_stream(int ordinal)
{
    return (cudaStream_t)select_gpu(select_device(ordinal));
}

// Σ points[i] over the set bits of d_bits (n bits), as a Jacobian point on the host, with
// sppark's batch_addition (supraseal's kernel for the ones of its split): a cooperative grid of
// one block per SM walks the map a warp-chunk at a time and leaves one xyzz sum per warp
// (degree-aware: a G2 sum is kept by a lane pair), added up here. batch_addition reads the
// map in whole 1024-bit chunks, so it reads a zero-padded copy. Its work counter is a device
// static reset by the kernel: callers serialise MSMs (and so these sums) of one device.
template <class bucket, class point>
void sum_on_device(int ordinal, const void* d_points, const uint64_t* d_bits, size_t n,
                   point& out)
{
    using bucket_h = typename bucket::mem_t;
    using affine_h = typename bucket::affine_t::mem_t;
#ifndef __CUDA_ARCH__
    static_assert(sizeof(bucket) == sizeof(bucket_h), "host buckets read as device memory");
#endif
    bucket total;
    total.inf();
    if (n >= (size_t(1) << 31))
        throw sppark_error(cudaErrorInvalidValue,
                           std::string("a sum of 2^31 or more points is beyond batch_addition"));
    if (n > 0) {
        int pool = select_device(ordinal);
        const gpu_t& gpu = select_gpu(pool);
        cudaStream_t stream = gpu;
        uint32_t warps = (uint32_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
        size_t bucket_bytes = warps * sizeof(bucket_h);
        size_t map_bytes = (n + 1023) / 1024 * 1024 / 8;
        std::vector<bucket> sums(warps);
        unsigned char* d_temp = nullptr;
        cudaError_t e = cudaMallocAsync((void**)&d_temp, bucket_bytes + map_bytes, stream);
        if (e == cudaErrorMemoryAllocation) {
            // What the MSM cache holds must never be why a sum fails (as in msm_on_device).
            (void)cudaGetLastError();
            kept_msms().release<msm_g1_t, msm_g2_t>(pool);
            e = cudaMallocAsync((void**)&d_temp, bucket_bytes + map_bytes, stream);
        }
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            throw sppark_error(e, std::string("point sum: allocating its scratch: ") +
                                      cudaGetErrorString(e));
        }
        bucket_h* d_sums = reinterpret_cast<bucket_h*>(d_temp);
        const uint32_t* d_map = reinterpret_cast<const uint32_t*>(d_temp + bucket_bytes);
        const affine_h* points = static_cast<const affine_h*>(d_points);
        uint32_t npoints = (uint32_t)n;
        bool accumulate = false;
        // batch_addition's work counter for this id is a device static; supraseal's split (in
        // the benchmark binary, which links it) uses ids 0 and 1 of the same kernels.
        uint32_t sid = BATCH_ADD_NSTREAMS - 1;
        void (*kernel)(bucket_h*, const affine_h*, uint32_t, const uint32_t*, bool, uint32_t) =
            batch_addition<bucket>;
        void* args[] = {&d_sums, &points, &npoints, &d_map, &accumulate, &sid};
        // Every step is enqueued only after the one before it was; the temporary is freed on
        // every path before the first error is thrown, and the error names its step.
        const char* step = "zeroing the map's padding";
        e = cudaMemsetAsync(d_temp + bucket_bytes, 0, map_bytes, stream);
        if (e == cudaSuccess) {
            step = "copying the map";
            e = cudaMemcpyAsync(d_temp + bucket_bytes, d_bits, (n + 63) / 64 * 8,
                                cudaMemcpyDeviceToDevice, stream);
        }
        if (e == cudaSuccess) {
            step = "launching batch_addition";
            e = cudaLaunchCooperativeKernel((const void*)kernel, dim3(gpu.sm_count()),
                                            dim3(BATCH_ADD_BLOCK_SIZE), args, 0, stream);
        }
        if (e == cudaSuccess) {
            step = "copying the sums back";
            e = cudaMemcpyAsync(sums.data(), d_sums, bucket_bytes, cudaMemcpyDeviceToHost,
                                stream);
        }
        cudaError_t freed = cudaFreeAsync(d_temp, stream);
        cudaError_t synced = cudaStreamSynchronize(stream);
        if (e == cudaSuccess && freed != cudaSuccess) {
            step = "freeing its scratch";
            e = freed;
        }
        if (e == cudaSuccess && synced != cudaSuccess) {
            step = "waiting for it";
            e = synced;
        }
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            throw sppark_error(e, std::string("point sum: ") + step + ": " +
                                      cudaGetErrorString(e));
        }
        for (const bucket& s : sums) total.add(s);
    }
    out = total;
}

// Launched with more threads per block than any device allows: the launch itself fails.
__global__ void never_runs() {}

// Writes through a null pointer: an illegal address, which breaks the context for good.
__global__ void write_through_null(volatile int* nowhere) { *nowhere = 1; }

constexpr unsigned threads = 256;
inline unsigned blocks_for(size_t n) { return (unsigned)((n + threads - 1) / threads); }

}  // namespace

extern "C" {

// The CUDA runtime version these kernels were linked with (cudart is static: 11080 for 11.8)
// and the number of devices sppark's pool can use (compute capability >= 7, cooperative
// launch), for the GPU check's log.
int cuzk_cuda_runtime_info(int* runtime_version, int* pool_size, char* err, size_t err_len)
{
    return guarded("runtime info", err, err_len, [&] {
        CUDA_OK(cudaRuntimeGetVersion(runtime_version));
        *pool_size = (int)ngpus();
    });
}

// Checks that sppark can use device `ordinal` (compute capability 7+, cooperative launch), so
// a device it would refuse is refused when the backend opens, not at every partition.
int cuzk_cuda_check_device(int ordinal, char* err, size_t err_len)
{
    return guarded("device check", err, err_len, [&] { select_device(ordinal); });
}

// Computes the coefficients of h = (a*b - c)/z in place in d_a, on `stream`.
//
// d_a, d_b, d_c hold n evaluations each and have room for 2^lg (the tail is zeroed here).
// z_inv is 1/(7^(2^lg) - 1) in Montgomery form. The result equals bellperson's: iNTT, coset
// NTT, pointwise a*b - c, divide by z, inverse coset NTT; h is the first 2^lg - 1 entries.
int cuzk_cuda_quotient(int ordinal, void* stream, fr_t* d_a, fr_t* d_b, fr_t* d_c, size_t n,
                       uint32_t lg, const fr_t* z_inv, char* err, size_t err_len)
{
    return guarded("quotient", err, err_len, [&] {
        check_lg(lg);
        stream_view view{(cudaStream_t)stream, select_device(ordinal)};
        stream_t& s = reinterpret_cast<stream_t&>(view);
        size_t m = size_t(1) << lg;
        for (fr_t* v : {d_a, d_b, d_c}) {
            if (n < m) zero_fill<<<blocks_for(m - n), threads, 0, view.stream>>>(v, n, m);
            NTT::Base_dev_ptr(s, v, lg, NTT::InputOutputOrder::NR, NTT::Direction::inverse,
                              NTT::Type::standard);
            NTT::Base_dev_ptr(s, v, lg, NTT::InputOutputOrder::RN, NTT::Direction::forward,
                              NTT::Type::coset);
        }
        abc_to_h<<<blocks_for(m), threads, 0, view.stream>>>(d_a, d_b, d_c, *z_inv, m);
        NTT::Base_dev_ptr(s, d_a, lg, NTT::InputOutputOrder::NN, NTT::Direction::inverse,
                          NTT::Type::coset);
    });
}

// Copies the scalars whose density bit is set, in order, to d_out on `stream`. d_prefix[w] is
// the number of set bits in words 0..w of d_bits (computed on the host).
int cuzk_cuda_gather(int ordinal, void* stream, fr_t* d_out, const fr_t* d_in,
                     const uint64_t* d_bits, const uint32_t* d_prefix, size_t n, char* err,
                     size_t err_len)
{
    return guarded("density gather", err, err_len, [&] {
        select_device(ordinal);
        if (n == 0) return;
        gather_by_density<<<blocks_for(n), threads, 0, (cudaStream_t)stream>>>(
            d_out, d_in, d_bits, d_prefix, n);
    });
}

// G1 multi-scalar multiplication over device-resident points and scalars (Montgomery form).
// Blocks until done; `out` is a host blst_p1 (Jacobian). Not re-entrant per device: callers
// serialise MSMs of one device.
int cuzk_cuda_msm_g1(int ordinal, const void* d_points, const fr_t* d_scalars, size_t n,
                     point_t* out, char* err, size_t err_len)
{
    return guarded("G1 MSM", err, err_len, [&] {
        msm_on_device<msm_g1_t, 1, point_t, affine_t>(ordinal, d_points, d_scalars, n, *out);
    });
}

// G2 multi-scalar multiplication, as cuzk_cuda_msm_g1; `out` is a host blst_p2 (Jacobian).
int cuzk_cuda_msm_g2(int ordinal, const void* d_points, const fr_t* d_scalars, size_t n,
                     point_fp2_t* out, char* err, size_t err_len)
{
    return guarded("G2 MSM", err, err_len, [&] {
        msm_on_device<msm_g2_t, 2, point_fp2_t, affine_fp2_t>(ordinal, d_points, d_scalars, n,
                                                              *out);
    });
}

// The MSM bit split's classification: bit i of d_ones is set when d_scalars[i] is 1, of
// d_others when it is neither 0 nor 1 (Montgomery form; `one` is 1 in it). Each map has
// ceil(n/64) words; every word is written. Blocks until done.
int cuzk_cuda_split_classify(int ordinal, const fr_t* d_scalars, size_t n, const fr_t* one,
                             uint64_t* d_ones, uint64_t* d_others, char* err, size_t err_len)
{
    return guarded("MSM split classify", err, err_len, [&] {
        cudaStream_t stream = split_stream(ordinal);
        size_t words = (n + 63) / 64;
        if (words == 0) return;
        raw_scalar raw_one;
        memcpy(&raw_one, one, sizeof(raw_one));
        classify_scalars<<<blocks_for(words * 64), threads, 0, stream>>>(
            d_scalars, n, raw_one, (uint32_t*)d_ones, (uint32_t*)d_others);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaStreamSynchronize(stream));
    });
}

// Copies chunk [lo, hi) of the scalars whose bit is set in d_bits (ranks, in index order) and
// their points to d_out_scalars and d_out_points (hi - lo each). `curve` is 1 (G1 affine
// points) or 2 (G2). d_prefix[w] is the number of set bits in words before w. Blocks.
int cuzk_cuda_split_gather(int ordinal, int curve, fr_t* d_out_scalars, void* d_out_points,
                           const fr_t* d_scalars, const void* d_points, const uint64_t* d_bits,
                           const uint32_t* d_prefix, size_t n, size_t lo, size_t hi, char* err,
                           size_t err_len)
{
    return guarded("MSM split gather", err, err_len, [&] {
        cudaStream_t stream = split_stream(ordinal);
        if (n == 0 || lo >= hi) return;
        if (curve == 1)
            gather_chunk<g1_point_bytes><<<blocks_for(n), threads, 0, stream>>>(
                d_out_scalars, (g1_point_bytes*)d_out_points, d_scalars,
                (const g1_point_bytes*)d_points, d_bits, d_prefix, n, lo, hi);
        else if (curve == 2)
            gather_chunk<g2_point_bytes><<<blocks_for(n), threads, 0, stream>>>(
                d_out_scalars, (g2_point_bytes*)d_out_points, d_scalars,
                (const g2_point_bytes*)d_points, d_bits, d_prefix, n, lo, hi);
        else
            throw sppark_error(cudaErrorInvalidValue, std::string("curve must be 1 or 2"));
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaStreamSynchronize(stream));
    });
}

// Σ of the G1 points whose bit is set in d_bits (n bits): the MSM split's "ones". Blocks;
// `out` is a host blst_p1 (Jacobian).
int cuzk_cuda_sum_g1(int ordinal, const void* d_points, const uint64_t* d_bits, size_t n,
                     point_t* out, char* err, size_t err_len)
{
    return guarded("G1 sum", err, err_len, [&] {
        sum_on_device<bucket_t, point_t>(ordinal, d_points, d_bits, n, *out);
    });
}

// As cuzk_cuda_sum_g1 over G2 points; `out` is a host blst_p2 (Jacobian).
int cuzk_cuda_sum_g2(int ordinal, const void* d_points, const uint64_t* d_bits, size_t n,
                     point_fp2_t* out, char* err, size_t err_len)
{
    return guarded("G2 sum", err, err_len, [&] {
        sum_on_device<bucket_fp2_t, point_fp2_t>(ordinal, d_points, d_bits, n, *out);
    });
}

// Deletes the MSM state kept for device `ordinal` (see msm_cache), so its device memory can
// hold an SRS or buffers instead; `*dropped` is how many objects were let go.
int cuzk_cuda_msm_release(int ordinal, size_t* dropped, char* err, size_t err_len)
{
    return guarded("MSM release", err, err_len, [&] {
        *dropped = kept_msms().release<msm_g1_t, msm_g2_t>(select_device(ordinal));
    });
}

// A forward or inverse NTT of 2^lg device scalars in natural order (benchmarks and tests).
int cuzk_cuda_ntt(int ordinal, void* stream, fr_t* d_v, uint32_t lg, bool inverse, char* err,
                  size_t err_len)
{
    return guarded("NTT", err, err_len, [&] {
        check_lg(lg);
        stream_view view{(cudaStream_t)stream, select_device(ordinal)};
        NTT::Base_dev_ptr(reinterpret_cast<stream_t&>(view), d_v, lg,
                          NTT::InputOutputOrder::NN,
                          inverse ? NTT::Direction::inverse : NTT::Direction::forward,
                          NTT::Type::standard);
    });
}

// A kernel launch that fails (4096 threads per block is over every device's limit), for the
// GPU checks: it proves that a failed launch comes back as an error the engine survives. The
// error is not sticky, so the context stays usable.
int cuzk_cuda_failing_launch(int ordinal, void* stream, char* err, size_t err_len)
{
    return guarded("injected kernel failure", err, err_len, [&] {
        select_device(ordinal);
        never_runs<<<1, 4096, 0, (cudaStream_t)stream>>>();
    });
}

// A kernel that writes to an illegal address, then waits for it: the GPU checks' sticky error.
// The context of device `ordinal` is broken afterwards: every later call on it fails, in this
// process, for good. Only for a check run last in its own process.
int cuzk_cuda_illegal_access(int ordinal, void* stream, char* err, size_t err_len)
{
    return guarded("injected sticky error", err, err_len, [&] {
        select_device(ordinal);
        write_through_null<<<1, 1, 0, (cudaStream_t)stream>>>(nullptr);
        CUDA_OK(cudaStreamSynchronize((cudaStream_t)stream));
    });
}

}  // extern "C"
