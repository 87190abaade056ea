package ffi_test

import (
	"testing"

	"github.com/cuzk-dev/cuzk/go/ffi"
	"github.com/cuzk-dev/cuzk/go/internal/testdata"
	"github.com/filecoin-project/go-state-types/abi"
)

func TestFilecoinFFIShapes(t *testing.T) {
	d := testdata.Load(t)
	p := d.Porep[0]
	seal, err := ffi.SealCommitPhase2(d.File(t, p.C1File), abi.SectorNumber(p.Sector), abi.ActorID(d.MinerID))
	if err != nil || len(seal) != 192 {
		t.Fatalf("SealCommitPhase2: %d bytes, %v", len(seal), err)
	}

	w := d.Winning
	winning, err := ffi.GenerateWinningPoStWithVanilla(abi.RegisteredPoStProof(w.Registered), abi.ActorID(d.MinerID), testdata.Hex(t, w.Randomness), d.Files(t, w.VanillaFiles))
	if err != nil || len(winning) != 1 || len(winning[0].ProofBytes) != 192 || winning[0].PoStProof != abi.RegisteredPoStProof_StackedDrgWinning2KiBV1 {
		t.Fatalf("GenerateWinningPoStWithVanilla: %+v, %v", winning, err)
	}

	win := d.Window
	part, err := ffi.GenerateSinglePartitionWindowPoStWithVanilla(abi.RegisteredPoStProof(win.Registered), abi.ActorID(d.MinerID), testdata.Hex(t, win.Randomness), d.Files(t, win.VanillaFiles), uint(win.Partition))
	if err != nil || len(part.ProofBytes) != 192 || part.PoStProof != abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1 {
		t.Fatalf("GenerateSinglePartitionWindowPoStWithVanilla: %+v, %v", part, err)
	}
	merged, err := ffi.MergeWindowPoStPartitionProofs(part.PoStProof, []ffi.PartitionProof{*part, *part})
	if err != nil || len(merged.ProofBytes) != 384 {
		t.Fatalf("MergeWindowPoStPartitionProofs: %v", err)
	}

	s := d.Snap
	old, _ := ffi.ReplicaCommitmentToCID(testdata.Hex(t, s.CommROld))
	newR, _ := ffi.ReplicaCommitmentToCID(testdata.Hex(t, s.CommRNew))
	newD, _ := ffi.DataCommitmentToCID(testdata.Hex(t, s.CommDNew))
	update, err := ffi.SectorUpdate.GenerateUpdateProofWithVanilla(abi.RegisteredUpdateProof(s.Registered), old, newR, newD, d.Files(t, s.VanillaFiles))
	if err != nil || len(update) != 192 {
		t.Fatalf("GenerateUpdateProofWithVanilla: %d bytes, %v", len(update), err)
	}
	if _, err := ffi.SectorUpdate.GenerateUpdateProofWithVanilla(abi.RegisteredUpdateProof(s.Registered), newD, newR, newD, d.Files(t, s.VanillaFiles)); err == nil {
		t.Fatal("an unsealed CID as comm_r_old must be rejected")
	}
	devices, err := ffi.GetGPUDevices()
	if err != nil || devices == nil {
		t.Fatalf("GetGPUDevices: %v %v", devices, err)
	}
}
