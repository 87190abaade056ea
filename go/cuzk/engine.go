package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"unsafe"
)

// JobID identifies a submitted job.
type JobID uint64

// RegisteredFromC1 asks SubmitPoRep to take the registered seal proof from the C1 output.
const RegisteredFromC1 = ^uint64(0)

// Config is the engine configuration as TOML (empty: defaults; CUZK_* variables override).
type Config struct {
	TOML string
}

// Engine is an open cuzk engine. Its methods are safe for concurrent use, Close included:
// the library checks the handle on every call, so Close never waits for other calls; calls in
// progress and later calls return ErrClosed.
type Engine struct {
	handle    *C.CuzkEngine
	isDefault bool
}

var (
	defaultMu     sync.Mutex
	defaultEngine *Engine
)

// Default returns the process-wide default engine: the one the C library's one-shot
// cuzk_prove_* calls use, opened with the default config (and CUZK_* overrides) on first use.
// It lives until the process exits; Close on it returns an error.
func Default() (*Engine, error) {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultEngine != nil {
		return defaultEngine, nil
	}
	var handle *C.CuzkEngine
	var msg *C.char
	if err := takeError(C.cuzk_default_engine(&handle, &msg), msg); err != nil {
		return nil, err
	}
	defaultEngine = &Engine{handle: handle, isDefault: true}
	return defaultEngine, nil
}

// takeError converts a code and an owned C message into a Go error and frees the message.
func takeError(code C.CuzkCode, msg *C.char) error {
	if msg != nil {
		defer C.cuzk_string_free(msg)
	}
	if Code(code) == CodeOK {
		return nil
	}
	text := "unknown error"
	if msg != nil {
		text = C.GoString(msg)
	}
	return &Error{Code: Code(code), Message: text}
}

// Open starts an engine.
func Open(cfg Config) (*Engine, error) {
	var ctoml *C.char
	if cfg.TOML != "" {
		ctoml = C.CString(cfg.TOML)
		defer C.free(unsafe.Pointer(ctoml))
	}
	var handle *C.CuzkEngine
	var msg *C.char
	if err := takeError(C.cuzk_engine_open(ctoml, &handle, &msg), msg); err != nil {
		return nil, err
	}
	return &Engine{handle: handle}, nil
}

// with runs f with the handle. The library refuses a closed handle with CodeClosed, so no
// lock is needed here and Close never waits for f.
func (e *Engine) with(f func(h *C.CuzkEngine) error) error {
	return f(e.handle)
}

// cBytes copies b into C memory (cgo forbids C keeping Go pointers); free with C.free.
func cBytes(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(C.CBytes(b)), C.size_t(len(b))
}

// cSlices copies byte slices into C memory as a CuzkSlice array; call the returned func to free.
func cSlices(items [][]byte) (*C.CuzkSlice, C.size_t, func()) {
	if len(items) == 0 {
		return nil, 0, func() {}
	}
	arr := (*[1 << 28]C.CuzkSlice)(C.malloc(C.size_t(len(items)) * C.size_t(unsafe.Sizeof(C.CuzkSlice{}))))[:len(items):len(items)]
	for i, it := range items {
		p, n := cBytes(it)
		arr[i] = C.CuzkSlice{ptr: p, len: n}
	}
	return &arr[0], C.size_t(len(items)), func() {
		for _, s := range arr {
			C.free(unsafe.Pointer(s.ptr))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}

// SubmitPoRep queues a PoRep C2 proof from the C1 output JSON. registered is the
// abi.RegisteredSealProof number or RegisteredFromC1.
func (e *Engine) SubmitPoRep(c1 []byte, registered uint64, sector, miner uint64) (JobID, error) {
	var job C.uint64_t
	err := e.with(func(h *C.CuzkEngine) error {
		p, n := cBytes(c1)
		defer C.free(unsafe.Pointer(p))
		var msg *C.char
		code := C.cuzk_submit_porep(h, p, n, C.uint64_t(registered), C.uint64_t(sector), C.uint64_t(miner), &job, &msg)
		return takeError(code, msg)
	})
	return JobID(job), err
}

// SubmitPoRepCircuitProofs queues the circuit proofs of a PoRep C2 (filecoin-ffi's
// SealCommitPhase2CircuitProofs): the partition proofs for aggregation, made without a miner
// id (the registered proof comes from the C1 output; NI-PoRep proofs are not aggregated).
func (e *Engine) SubmitPoRepCircuitProofs(c1 []byte, sector uint64) (JobID, error) {
	var job C.uint64_t
	err := e.with(func(h *C.CuzkEngine) error {
		p, n := cBytes(c1)
		defer C.free(unsafe.Pointer(p))
		var msg *C.char
		code := C.cuzk_submit_porep_circuit_proofs(h, p, n, C.uint64_t(sector), &job, &msg)
		return takeError(code, msg)
	})
	return JobID(job), err
}

// SubmitWinningPoSt queues a WinningPoSt proof from vanilla proofs.
func (e *Engine) SubmitWinningPoSt(registered uint64, randomness []byte, miner uint64, vanilla [][]byte) (JobID, error) {
	var job C.uint64_t
	err := e.with(func(h *C.CuzkEngine) error {
		r, rn := cBytes(randomness)
		defer C.free(unsafe.Pointer(r))
		v, vn, free := cSlices(vanilla)
		defer free()
		var msg *C.char
		code := C.cuzk_submit_winning_post(h, C.uint64_t(registered), r, rn, C.uint64_t(miner), v, vn, &job, &msg)
		return takeError(code, msg)
	})
	return JobID(job), err
}

// SubmitWindowPoSt queues one WindowPoSt partition proof from vanilla proofs.
func (e *Engine) SubmitWindowPoSt(registered uint64, randomness []byte, miner uint64, vanilla [][]byte, partition uint64) (JobID, error) {
	var job C.uint64_t
	err := e.with(func(h *C.CuzkEngine) error {
		r, rn := cBytes(randomness)
		defer C.free(unsafe.Pointer(r))
		v, vn, free := cSlices(vanilla)
		defer free()
		var msg *C.char
		code := C.cuzk_submit_window_post(h, C.uint64_t(registered), r, rn, C.uint64_t(miner), v, vn, C.uint64_t(partition), &job, &msg)
		return takeError(code, msg)
	})
	return JobID(job), err
}

// ProveWindowPoStAll proves a whole WindowPoSt and waits: the vanilla proofs of all sectors
// (in sector-id order) are cut into partitions of the proof type's sector count, each is
// proved, and the merged proof is returned (filecoin-ffi's GenerateWindowPoStWithVanilla).
// It blocks in the library until done; use SubmitWindowPoSt per partition to cancel.
func (e *Engine) ProveWindowPoStAll(registered uint64, randomness []byte, miner uint64, vanilla [][]byte) ([]byte, error) {
	var proof []byte
	err := e.with(func(h *C.CuzkEngine) error {
		r, rn := cBytes(randomness)
		defer C.free(unsafe.Pointer(r))
		v, vn, free := cSlices(vanilla)
		defer free()
		var out C.CuzkBytes
		var msg *C.char
		code := C.cuzk_prove_window_post(h, C.uint64_t(registered), r, rn, C.uint64_t(miner), v, vn, C.CUZK_ALL_PARTITIONS, &out, &msg)
		if Code(code) == CodeOK {
			proof = C.GoBytes(unsafe.Pointer(out.ptr), C.int(out.len))
			C.cuzk_bytes_free(&out)
		}
		return takeError(code, msg)
	})
	return proof, err
}

// SubmitSnapDeals queues a SnapDeals update proof from per-partition vanilla proofs.
func (e *Engine) SubmitSnapDeals(registered uint64, vanilla [][]byte, commROld, commRNew, commDNew []byte) (JobID, error) {
	var job C.uint64_t
	err := e.with(func(h *C.CuzkEngine) error {
		v, vn, free := cSlices(vanilla)
		defer free()
		commitments := make([]C.CuzkSlice, 3)
		for i, c := range [][]byte{commROld, commRNew, commDNew} {
			p, n := cBytes(c)
			defer C.free(unsafe.Pointer(p))
			commitments[i] = C.CuzkSlice{ptr: p, len: n}
		}
		var msg *C.char
		code := C.cuzk_submit_snap_deals(h, C.uint64_t(registered), v, vn, commitments[0], commitments[1], commitments[2], &job, &msg)
		return takeError(code, msg)
	})
	return JobID(job), err
}

// awaitSlice is how long one blocking wait in C lasts before Await checks its context again.
const awaitSliceMs = 100

// Timings says where a job's time went, in milliseconds (summed over partitions).
type Timings struct {
	QueueMs, SynthMs, ProveMs, VerifyMs float64
}

// Await waits for a job's proof. When ctx ends first, the job is released (cancelled, and
// its record freed in the engine as soon as nothing of it is in flight, so an abandoned job
// holds nothing) and the error matches both ErrCancelled and ctx.Err(); the job cannot be
// awaited again.
func (e *Engine) Await(ctx context.Context, id JobID) ([]byte, error) {
	proof, _, err := e.AwaitTimed(ctx, id)
	return proof, err
}

// AwaitTimed is Await that also returns the job's phase timings.
func (e *Engine) AwaitTimed(ctx context.Context, id JobID) ([]byte, Timings, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, Timings{}, e.abandon(id, err)
		}
		var proof []byte
		var t Timings
		err := e.with(func(h *C.CuzkEngine) error {
			var out C.CuzkBytes
			timings := C.CuzkTimings{struct_size: C.uint32_t(unsafe.Sizeof(C.CuzkTimings{}))}
			var msg *C.char
			code := C.cuzk_await(h, C.uint64_t(id), awaitSliceMs, &out, &timings, &msg)
			if Code(code) == CodeOK {
				proof = C.GoBytes(unsafe.Pointer(out.ptr), C.int(out.len))
				C.cuzk_bytes_free(&out)
				t = Timings{float64(timings.queue_ms), float64(timings.synth_ms), float64(timings.prove_ms), float64(timings.verify_ms)}
			}
			return takeError(code, msg)
		})
		if err == nil {
			return proof, t, nil
		}
		var ce *Error
		if !asError(err, &ce) || ce.Code != CodeTimeout {
			return nil, t, err
		}
	}
}

// abandon releases a job whose awaiting context ended with ctxErr and returns the error
// Await reports. A job already gone (awaited elsewhere, or the engine closed) is not an error
// here: the caller gave up on it either way.
func (e *Engine) abandon(id JobID, ctxErr error) error {
	_ = e.Release(id)
	return fmt.Errorf("%w: %w", ErrCancelled, ctxErr)
}

func asError(err error, out **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*out = e
	}
	return ok
}

// Cancel cancels a job; its Await returns ErrCancelled.
func (e *Engine) Cancel(id JobID) error {
	return e.with(func(h *C.CuzkEngine) error {
		var msg *C.char
		return takeError(C.cuzk_cancel(h, C.uint64_t(id), &msg), msg)
	})
}

// Release gives up on a job that will not be awaited: a running job is cancelled, and the
// engine frees its record and request as soon as nothing of it is in flight. Afterwards the
// job is unknown: Await, Cancel and Release on it return ErrUnknownJob, as does Release of a
// job whose proof Await already returned.
func (e *Engine) Release(id JobID) error {
	return e.with(func(h *C.CuzkEngine) error {
		var msg *C.char
		return takeError(C.cuzk_job_release(h, C.uint64_t(id), &msg), msg)
	})
}

// Status is the engine's status (see the Rust `Status` for the fields).
type Status map[string]any

// Status returns a snapshot of queues, workers, pool, budget and counters.
func (e *Engine) Status() (Status, error) {
	var st Status
	err := e.with(func(h *C.CuzkEngine) error {
		var js, msg *C.char
		if err := takeError(C.cuzk_status_json(h, &js, &msg), msg); err != nil {
			return err
		}
		defer C.cuzk_string_free(js)
		return json.Unmarshal([]byte(C.GoString(js)), &st)
	})
	return st, err
}

// Summary is the engine's status as fixed fields (the C struct CuzkStatus).
type Summary struct {
	Backend                                                     string
	Closed                                                      bool
	UptimeMs                                                    float64
	PartitionsQueued, PartitionsSynthesized, PartitionsInFlight uint64
	JobsActive, JobsCompleted, JobsFailed, JobsCancelled        uint64
	PoolBuffers, PoolFree, PoolBytes                            uint64
	BudgetLimit, BudgetUsed, BudgetHighWater                    uint64
	SRSResident, SRSResidentBytes                               uint64
	// JobsHeld counts the job records the engine holds: active jobs, and ended ones not yet
	// awaited or released (0 once every job was one or the other).
	JobsHeld uint64
}

// Summary returns a snapshot of the engine as fixed fields (Status has every detail).
func (e *Engine) Summary() (Summary, error) {
	st := C.CuzkStatus{struct_size: C.uint32_t(unsafe.Sizeof(C.CuzkStatus{}))}
	err := e.with(func(h *C.CuzkEngine) error {
		var msg *C.char
		return takeError(C.cuzk_status(h, &st, &msg), msg)
	})
	if err != nil {
		return Summary{}, err
	}
	return Summary{
		Backend:               C.GoString(&st.backend[0]),
		Closed:                bool(st.closed),
		UptimeMs:              float64(st.uptime_ms),
		PartitionsQueued:      uint64(st.partitions_queued),
		PartitionsSynthesized: uint64(st.partitions_synthesized),
		PartitionsInFlight:    uint64(st.partitions_in_flight),
		JobsActive:            uint64(st.jobs_active),
		JobsCompleted:         uint64(st.jobs_completed),
		JobsFailed:            uint64(st.jobs_failed),
		JobsCancelled:         uint64(st.jobs_cancelled),
		PoolBuffers:           uint64(st.pool_buffers),
		PoolFree:              uint64(st.pool_free),
		PoolBytes:             uint64(st.pool_bytes),
		BudgetLimit:           uint64(st.budget_limit),
		BudgetUsed:            uint64(st.budget_used),
		BudgetHighWater:       uint64(st.budget_high_water),
		SRSResident:           uint64(st.srs_resident),
		SRSResidentBytes:      uint64(st.srs_resident_bytes),
		JobsHeld:              uint64(st.jobs_held),
	}, nil
}

// Close stops the engine: unfinished jobs fail with ErrClosed, calls waiting on them return,
// later calls return ErrClosed. It does not wait for other calls. A second Close returns
// ErrClosed; closing the default engine returns ErrInvalidInput.
func (e *Engine) Close() error {
	var msg *C.char
	return takeError(C.cuzk_engine_close(e.handle, &msg), msg)
}

// Preload decodes a circuit's parameters now ("porep-2k", "winning-32g", ...).
func (e *Engine) Preload(kind string) error {
	ck := C.CString(kind)
	defer C.free(unsafe.Pointer(ck))
	return e.with(func(h *C.CuzkEngine) error {
		var msg *C.char
		return takeError(C.cuzk_preload(h, ck, &msg), msg)
	})
}

// Evict drops a circuit's resident parameters when no job uses them.
func (e *Engine) Evict(kind string) (bool, error) {
	ck := C.CString(kind)
	defer C.free(unsafe.Pointer(ck))
	var evicted C.bool
	err := e.with(func(h *C.CuzkEngine) error {
		var msg *C.char
		return takeError(C.cuzk_evict(h, ck, &evicted, &msg), msg)
	})
	return bool(evicted), err
}

// GPUDevices lists the GPUs the library can use (none in builds without CUDA).
func GPUDevices() ([]string, error) {
	var js, msg *C.char
	if err := takeError(C.cuzk_gpu_devices(&js, &msg), msg); err != nil {
		return nil, err
	}
	defer C.cuzk_string_free(js)
	var out []string
	return out, json.Unmarshal([]byte(C.GoString(js)), &out)
}
