package cuzk_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cuzk-dev/cuzk/go/cuzk"
)

func TestPlanSizesANode(t *testing.T) {
	mix := []string{"porep-32g", "snap-32g", "window-32g", "winning-32g"}
	p, err := cuzk.Plan(cuzk.PlanNode{RAMBytes: 512 << 30, GPUBytes: []uint64{80e9}, Cores: 64}, mix)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Fits || p.Reason != "" || len(p.Circuits) != 4 || p.MemoryBudget != 384<<30 {
		t.Fatalf("512 GiB plan: %+v", p)
	}
	if p.BufferConstraints != 1<<27 || p.PoolBuffers < 3 || p.SynthesisWorkers < 1 || p.ProverWorkers != 1 {
		t.Fatalf("512 GiB plan sizing: %+v", p)
	}
	// One CPU fallback's transients beyond the GPU's: about 15 GiB at 32 GiB on 64 cores.
	if p.GPUFallbackBytes < 12<<30 || p.GPUFallbackBytes > 16<<30 {
		t.Fatalf("512 GiB plan: GPU fallback reserve %d", p.GPUFallbackBytes)
	}
	if p.Circuits[3].Class != "critical" || p.InFlight.Total == 0 || p.Throughput.PartitionsPerHour <= 0 {
		t.Fatalf("512 GiB plan details: %+v", p)
	}
	if tp := p.Throughput; tp.ReloadMsPerMix != 0 || tp.ResourceBound < tp.PartitionsPerHour {
		t.Fatalf("512 GiB plan keeps every set resident, so reloads cost nothing: %+v", tp)
	}
	// 192 GiB cannot keep the four sets beside its pool: reloads lower the rate counted on.
	reloading, err := cuzk.Plan(cuzk.PlanNode{RAMBytes: 192 << 30, GPUBytes: []uint64{80e9}, Cores: 64}, mix)
	if tp := reloading.Throughput; err != nil || tp.ReloadMsPerMix <= 0 || tp.ResourceBound <= tp.PartitionsPerHour {
		t.Fatalf("192 GiB plan: %+v %v", tp, err)
	}
	// WindowPoSt evicts the sets, so every job reloads; PoRep and SnapDeals alone are grouped
	// by the engine's parameter affinity and pay a share of one switch per period.
	if tp := reloading.Throughput; tp.AffinitySecs != 0 || tp.ReloadMsPerJobMix != tp.ReloadMsPerMix {
		t.Fatalf("192 GiB plan with WindowPoSt: %+v", tp)
	}
	grouped, err := cuzk.Plan(cuzk.PlanNode{RAMBytes: 160 << 30, GPUBytes: []uint64{80e9}, Cores: 32}, mix[:2])
	if tp := grouped.Throughput; err != nil || tp.AffinitySecs != 1800 || tp.ReloadMsPerMix <= 0 || tp.ReloadMsPerMix >= tp.ReloadMsPerJobMix/10 {
		t.Fatalf("160 GiB porep+snap plan: %+v %v", tp, err)
	}
	// A partition's synthesis spreads over its challenges (PoRep's 18, SnapDeals' 86): a
	// few seconds on 32 cores where one core would take over 20.
	if c := grouped.Circuits; c[0].SynthMs <= 0 || c[0].SynthMs >= 5000 || c[1].SynthMs <= 0 || c[1].SynthMs >= 5000 {
		t.Fatalf("160 GiB porep+snap synthesis times: %+v", c)
	}
	if !strings.Contains(p.ConfigTOML, "pool_buffers = ") {
		t.Fatalf("config: %q", p.ConfigTOML)
	}
	var raw map[string]any
	if err := json.Unmarshal(p.Raw, &raw); err != nil || raw["gpus"] == nil {
		t.Fatalf("raw plan: %v %s", err, p.Raw)
	}
	// A CPU-only node with a small mix.
	small, err := cuzk.Plan(cuzk.PlanNode{RAMBytes: 64 << 30, Cores: 2}, []string{"winning-32g"})
	if err != nil || !small.Fits || small.GPUFallbackBytes != 0 {
		t.Fatalf("small plan: %+v %v", small, err)
	}

	tiny, err := cuzk.Plan(cuzk.PlanNode{RAMBytes: 64 << 30, Cores: 16}, mix)
	if err != nil {
		t.Fatal(err)
	}
	if tiny.Fits || !strings.Contains(tiny.Reason, "porep-32g") {
		t.Fatalf("64 GiB plan: fits %v, reason %q", tiny.Fits, tiny.Reason)
	}

	if _, err := cuzk.Plan(cuzk.PlanNode{RAMBytes: 1 << 30, Cores: 1}, []string{"porep-33g"}); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("unknown circuit: %v", err)
	}
	if _, err := cuzk.Plan(cuzk.PlanNode{RAMBytes: 1 << 30, Cores: 1}, nil); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("empty mix: %v", err)
	}
}
