// cuzk CUDA kernels for the Groth16 prover over BLS12-381.
//
// Field and curve arithmetic, the NTT and the Pippenger MSM come from sppark's headers (the
// crates.io `sppark` crate, see docs/gpu.md). This file adds cuzk's own pieces: the quotient
// h = (a*b - c)/z on the coset, density gathering of scalars, and a C entry point per step.
//
// Ownership: Rust (the `cust` crate) owns the devices, contexts, streams and every buffer; the
// entry points here take raw device pointers and a raw stream and never allocate long-lived
// memory. Every entry point catches all exceptions and reports errors as a code plus message.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <string>

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
#include <ntt/ntt.cuh>

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

// Throws a RustError from sppark as an exception, freeing its message.
void check(RustError& r)
{
    if (r.code == 0) return;
    std::string message = r.message ? r.message : "sppark call failed";
    free(r.message);
    r.message = nullptr;
    throw sppark_error(r.code, message);
}

// Σ scalars[i]·points[i] with sppark's Pippenger over device-resident points and scalars.
template <class bucket, class point, class affine>
void msm_on_device(int ordinal, const void* d_points, const fr_t* d_scalars, size_t n, point& out)
{
    int pool = select_device(ordinal);
    if (n == 0) {
        out.inf();
        return;
    }
    // On the heap: msm_t's destructor synchronises sppark's streams for this device with
    // CUDA_OK, which throws if an error landed (a sticky one, or an asynchronous one after
    // invoke returned), and a throw from a destructor terminates the process. So those
    // streams are first synchronised here without throwing, on every path, and the object is
    // deleted only if all of them succeeded; otherwise the small host object is leaked (the
    // context's memory is lost with the context anyway).
    using msm_type = msm_t<bucket, point, affine, scalar_t>;
    auto* msm = new msm_type(nullptr, n, sizeof(affine), pool);
    auto release = [&]() {
        const gpu_t& gpu = select_gpu(pool);
        bool healthy = cudaStreamSynchronize((cudaStream_t)gpu) == cudaSuccess;
        for (size_t i = 0; i < gpu_t::FLIP_FLOP; i++)
            healthy &= cudaStreamSynchronize((cudaStream_t)gpu[i]) == cudaSuccess;
        if (healthy)
            delete msm;
        else
            (void)cudaGetLastError();
    };
    RustError r{0};
    try {
        r = msm->invoke(out, dev_ptr_t<affine>((affine*)d_points, n), n,
                        dev_ptr_t<scalar_t>((scalar_t*)d_scalars, n), true);
    } catch (...) {
        release();
        throw;
    }
    release();
    check(r);
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
        msm_on_device<bucket_t, point_t, affine_t>(ordinal, d_points, d_scalars, n, *out);
    });
}

// G2 multi-scalar multiplication, as cuzk_cuda_msm_g1; `out` is a host blst_p2 (Jacobian).
int cuzk_cuda_msm_g2(int ordinal, const void* d_points, const fr_t* d_scalars, size_t n,
                     point_fp2_t* out, char* err, size_t err_len)
{
    return guarded("G2 MSM", err, err_len, [&] {
        msm_on_device<bucket_fp2_t, point_fp2_t, affine_fp2_t>(ordinal, d_points, d_scalars, n,
                                                               *out);
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
