package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import (
	"encoding/json"
	"unsafe"
)

// PlanNode is the machine to plan for.
type PlanNode struct {
	// RAMBytes is the physical memory in bytes.
	RAMBytes uint64
	// GPUBytes is the memory of each GPU in bytes (empty: a CPU-only node).
	GPUBytes []uint64
	// Cores is the number of CPU cores.
	Cores int
}

// PlanCircuit is what one circuit of the mix costs.
type PlanCircuit struct {
	Name       string `json:"name"`
	Class      string `json:"class"`
	Partitions int    `json:"partitions"`
	Domain     uint64 `json:"domain"`
	SRSBytes   uint64 `json:"srs_bytes"`
	SetBytes   uint64 `json:"set_bytes"`
	// PartitionBytes is what the engine charges per partition in flight.
	PartitionBytes uint64 `json:"partition_bytes"`
	// SynthMs is one partition's synthesis time with the planned workers sharing the cores.
	SynthMs float64 `json:"synth_ms"`
	// NeedBytes is what one job needs beside the pool (the engine's TooLarge check).
	NeedBytes uint64 `json:"need_bytes"`
	Fits      bool   `json:"fits"`
}

// PlanInFlight is the most partitions each stage can hold at once.
type PlanInFlight struct {
	Synthesis   int `json:"synthesis"`
	Waiting     int `json:"waiting"`
	ProveStart  int `json:"prove_start"`
	ProveFinish int `json:"prove_finish"`
	Total       int `json:"total"`
}

// PlanResult is the plan cuzk_plan returns: the main fields, and the whole plan as JSON in
// Raw (see the Rust `engine::plan::Plan` for every field).
type PlanResult struct {
	MemoryBudget      uint64 `json:"memory_budget"`
	BufferConstraints uint64 `json:"buffer_constraints"`
	PoolBuffers       int    `json:"pool_buffers"`
	PoolBytes         uint64 `json:"pool_bytes"`
	SynthesisWorkers  int    `json:"synthesis_workers"`
	ProverWorkers     int    `json:"prover_workers"`
	// GPUFallbackBytes is what a GPU node leaves free so one partition can go to the CPU
	// after a device failure (0 on a CPU node).
	GPUFallbackBytes uint64        `json:"gpu_fallback_bytes"`
	Circuits         []PlanCircuit `json:"items"`
	Resident         struct {
		AllResident          bool   `json:"all_resident"`
		AllBytes             uint64 `json:"all_bytes"`
		MinBudgetAllResident uint64 `json:"min_budget_all_resident"`
	} `json:"resident"`
	InFlight   PlanInFlight `json:"in_flight"`
	Throughput struct {
		// PartitionsPerHour is the rate the node can count on: ResourceBound, less the
		// parameter reloads or pipeline waits of a mix whose kinds alternate.
		PartitionsPerHour float64 `json:"partitions_per_hour"`
		// ResourceBound is the rate the slowest resource allows (synthesis, the prover
		// lanes, the finalizers, memory); above PartitionsPerHour only when sets are reloaded.
		ResourceBound float64 `json:"resource_bound"`
		// ReloadMsPerMix is what reloading evicted parameter sets costs a mix (0 when every
		// set stays resident): with the engine's parameter affinity (AffinitySecs > 0) a
		// share of one switch of every set per affinity period, else every job's reload.
		ReloadMsPerMix float64 `json:"reload_ms_per_mix"`
		// ReloadMsPerJobMix is what a mix would lose if every job reloaded its set.
		ReloadMsPerJobMix float64 `json:"reload_ms_per_job_mix"`
		// AffinitySecs is how long the plan counts on the engine holding a set (0: not
		// counted, as when WindowPoSt evicts the sets).
		AffinitySecs uint64 `json:"affinity_secs"`
		// PipelineMsPerMix is what the prover lanes lose a mix waiting for the first
		// partition of a job that synthesizes slower than the one before it.
		PipelineMsPerMix float64 `json:"pipeline_ms_per_mix"`
		Bottleneck       string  `json:"bottleneck"`
		MixesPerHour     float64 `json:"mixes_per_hour"`
	} `json:"throughput"`
	Fits bool `json:"fits"`
	// Reason says why the mix does not fit (empty when it does).
	Reason string `json:"reason"`
	// Notes are things to know that do not stop the mix (evictions, a GPU too small).
	Notes []string `json:"notes"`
	// ConfigTOML is the suggested engine config (pass it as Config.TOML).
	ConfigTOML string `json:"config_toml"`
	// Raw is the whole plan as JSON.
	Raw json.RawMessage `json:"-"`
}

// Plan sizes node for a mix of circuits ("porep-32g", "snap-32g", "window-32g",
// "winning-32g", and the same at 64g): what stays resident, each partition's footprint,
// partitions in flight per stage, whether the mix fits and which config to use. A mix that does
// not fit is not an error (Fits is false and Reason says why); unknown circuits are
// ErrInvalidInput.
func Plan(node PlanNode, mix []string) (PlanResult, error) {
	gpus := node.GPUBytes
	if gpus == nil {
		gpus = []uint64{}
	}
	req, err := json.Marshal(map[string]any{
		"ram_bytes": node.RAMBytes,
		"gpu_bytes": gpus,
		"cores":     node.Cores,
		"mix":       mix,
	})
	if err != nil {
		return PlanResult{}, err
	}
	creq := C.CString(string(req))
	defer C.free(unsafe.Pointer(creq))
	var js, msg *C.char
	if err := takeError(C.cuzk_plan(creq, &js, &msg), msg); err != nil {
		return PlanResult{}, err
	}
	defer C.cuzk_string_free(js)
	raw := []byte(C.GoString(js))
	var out PlanResult
	if err := json.Unmarshal(raw, &out); err != nil {
		return PlanResult{}, err
	}
	out.Raw = raw
	return out, nil
}
