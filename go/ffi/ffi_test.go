package ffi_test

import (
	"encoding/json"
	"testing"

	"github.com/cuzk-dev/cuzk/go/ffi"
	"github.com/cuzk-dev/cuzk/go/internal/testdata"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
)

func mustCID(c cid.Cid, err error) cid.Cid {
	if err != nil {
		panic(err)
	}
	return c
}

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
	whole, err := ffi.GenerateWindowPoStWithVanilla(abi.RegisteredPoStProof(win.Registered), abi.ActorID(d.MinerID), testdata.Hex(t, win.Randomness), d.Files(t, win.VanillaFiles))
	if err != nil || len(whole) != 1 || len(whole[0].ProofBytes) != 192 || whole[0].PoStProof != part.PoStProof {
		t.Fatalf("GenerateWindowPoStWithVanilla: %+v, %v", whole, err)
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
	// The verify functions run filecoin-proofs' verifier on what we proved.
	var c1 struct {
		Ticket [32]byte `json:"ticket"`
		Seed   [32]byte `json:"seed"`
	}
	if err := json.Unmarshal(d.File(t, p.C1File), &c1); err != nil {
		t.Fatal(err)
	}
	sealInfo := proof.SealVerifyInfo{
		SealProof:             abi.RegisteredSealProof(p.Registered),
		SectorID:              abi.SectorID{Miner: abi.ActorID(d.MinerID), Number: abi.SectorNumber(p.Sector)},
		Randomness:            c1.Ticket[:],
		InteractiveRandomness: c1.Seed[:],
		Proof:                 seal,
		SealedCID:             mustCID(ffi.ReplicaCommitmentToCID(testdata.Hex(t, p.CommR))),
		UnsealedCID:           mustCID(ffi.DataCommitmentToCID(testdata.Hex(t, p.CommD))),
	}
	if ok, err := ffi.VerifySeal(sealInfo); !ok || err != nil {
		t.Fatalf("VerifySeal: %v %v", ok, err)
	}
	sealInfo.Proof = append([]byte{}, seal...)
	sealInfo.Proof[10] ^= 1
	if ok, _ := ffi.VerifySeal(sealInfo); ok {
		t.Fatal("VerifySeal accepted a corrupted proof")
	}
	sector := func(i int) proof.SectorInfo {
		return proof.SectorInfo{
			SealProof:    abi.RegisteredSealProof(d.Porep[i].Registered),
			SectorNumber: abi.SectorNumber(d.Porep[i].Sector),
			SealedCID:    mustCID(ffi.ReplicaCommitmentToCID(testdata.Hex(t, d.Porep[i].CommR))),
		}
	}
	if ok, err := ffi.VerifyWinningPoSt(proof.WinningPoStVerifyInfo{
		Randomness: testdata.Hex(t, w.Randomness), Proofs: winning, ChallengedSectors: []proof.SectorInfo{sector(0)}, Prover: abi.ActorID(d.MinerID),
	}); !ok || err != nil {
		t.Fatalf("VerifyWinningPoSt: %v %v", ok, err)
	}
	if ok, err := ffi.VerifyWindowPoSt(proof.WindowPoStVerifyInfo{
		Randomness: testdata.Hex(t, win.Randomness), Proofs: []proof.PoStProof{proof.PoStProof(*part)}, ChallengedSectors: []proof.SectorInfo{sector(0), sector(1)}, Prover: abi.ActorID(d.MinerID),
	}); !ok || err != nil {
		t.Fatalf("VerifyWindowPoSt: %v %v", ok, err)
	}
	if ok, err := ffi.VerifyWindowPoSt(proof.WindowPoStVerifyInfo{
		Randomness: testdata.Hex(t, win.Randomness), Proofs: whole, ChallengedSectors: []proof.SectorInfo{sector(0), sector(1)}, Prover: abi.ActorID(d.MinerID),
	}); !ok || err != nil {
		t.Fatalf("VerifyWindowPoSt (whole): %v %v", ok, err)
	}
	// A whole WindowPoSt over three sectors: two partitions, merged, verified over all three.
	all := d.WindowAll
	three, err := ffi.GenerateWindowPoStWithVanilla(abi.RegisteredPoStProof(all.Registered), abi.ActorID(d.MinerID), testdata.Hex(t, all.Randomness), d.Files(t, all.VanillaFiles))
	if err != nil || len(three) != 1 || len(three[0].ProofBytes) != 2*192 {
		t.Fatalf("GenerateWindowPoStWithVanilla over 3 sectors: %+v, %v", three, err)
	}
	extra := proof.SectorInfo{
		SealProof:    abi.RegisteredSealProof(d.ExtraSector.Registered),
		SectorNumber: abi.SectorNumber(d.ExtraSector.Sector),
		SealedCID:    mustCID(ffi.ReplicaCommitmentToCID(testdata.Hex(t, d.ExtraSector.CommR))),
	}
	if ok, err := ffi.VerifyWindowPoSt(proof.WindowPoStVerifyInfo{
		Randomness: testdata.Hex(t, all.Randomness), Proofs: three, ChallengedSectors: []proof.SectorInfo{sector(0), sector(1), extra}, Prover: abi.ActorID(d.MinerID),
	}); !ok || err != nil {
		t.Fatalf("VerifyWindowPoSt (two partitions): %v %v", ok, err)
	}
	if ok, _ := ffi.VerifyWindowPoSt(proof.WindowPoStVerifyInfo{
		Randomness: testdata.Hex(t, all.Randomness), Proofs: three, ChallengedSectors: []proof.SectorInfo{sector(0), sector(1)}, Prover: abi.ActorID(d.MinerID),
	}); ok {
		t.Fatal("a two-partition proof verified against two sectors")
	}

	if ok, err := ffi.SectorUpdate.VerifyUpdateProof(proof.ReplicaUpdateInfo{
		UpdateProofType: abi.RegisteredUpdateProof(s.Registered), OldSealedSectorCID: old, NewSealedSectorCID: newR, NewUnsealedSectorCID: newD, Proof: update,
	}); !ok || err != nil {
		t.Fatalf("VerifyUpdateProof: %v %v", ok, err)
	}

	devices, err := ffi.GetGPUDevices()
	if err != nil || devices == nil {
		t.Fatalf("GetGPUDevices: %v %v", devices, err)
	}
}
