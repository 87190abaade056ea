package ffi_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/cuzk-dev/cuzk/go/ffi"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
)

// Randomness [7; 32] and miner 1000: the values below are pinned by the Rust unit tests in
// src/proofs/vanilla.rs, which compute them through filecoin-proofs-api.
var seven = abi.PoStRandomness(func() []byte {
	b := make([]byte, 32)
	for i := range b {
		b[i] = 7
	}
	return b
}())

func TestChallengesMatchFilecoinProofs(t *testing.T) {
	got, err := ffi.GenerateWinningPoStSectorChallenge(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, 1000, seven, 100)
	if err != nil || !reflect.DeepEqual(got, []uint64{68}) {
		t.Fatalf("GenerateWinningPoStSectorChallenge = %v, %v; want [68]", got, err)
	}
	if _, err := ffi.GenerateWinningPoStSectorChallenge(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, 1000, seven, 100); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("a WindowPoSt type must be refused: %v", err)
	}
	if _, err := ffi.GenerateWinningPoStSectorChallenge(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, 1000, seven, 0); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("an empty sector set must be refused: %v", err)
	}

	c, err := ffi.GeneratePoStFallbackSectorChallenges(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, 1000, seven, []abi.SectorNumber{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[abi.SectorNumber][]uint64{
		1: {19, 22, 62, 12, 15, 45, 43, 44, 4, 17},
		2: {55, 3, 32, 18, 14, 23, 18, 8, 12, 7},
	}
	if !reflect.DeepEqual(c.Sectors, []abi.SectorNumber{1, 2}) || !reflect.DeepEqual(c.Challenges, want) {
		t.Fatalf("GeneratePoStFallbackSectorChallenges = %+v", c)
	}
	// Output sorted and deduplicated, as filecoin-ffi's (a BTreeMap in Rust).
	c, err = ffi.GeneratePoStFallbackSectorChallenges(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, 1000, seven, []abi.SectorNumber{9, 3, 9})
	if err != nil || !reflect.DeepEqual(c.Sectors, []abi.SectorNumber{3, 9}) || len(c.Challenges[3]) != 10 {
		t.Fatalf("unsorted input: %+v, %v", c, err)
	}
	if _, err := ffi.GeneratePoStFallbackSectorChallenges(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, 1000, seven, nil); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("no sectors must be refused: %v", err)
	}
	// Chain randomness is taken as filecoin-ffi takes it (AsByteArray32): zero-padded to 32 bytes.
	padded := append(append([]byte(nil), seven[:31]...), 0)
	short, err := ffi.GeneratePoStFallbackSectorChallenges(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, 1000, seven[:31], []abi.SectorNumber{1})
	if err != nil {
		t.Fatalf("31-byte randomness: %v", err)
	}
	full, err := ffi.GeneratePoStFallbackSectorChallenges(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, 1000, padded, []abi.SectorNumber{1})
	if err != nil || !reflect.DeepEqual(short, full) {
		t.Fatalf("31-byte randomness is not read as its zero-padded value: %+v vs %+v (%v)", short, full, err)
	}
	many := make([]abi.SectorNumber, 3001)
	for i := range many {
		many[i] = abi.SectorNumber(i)
	}
	if _, err := ffi.GeneratePoStFallbackSectorChallenges(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, 1000, seven, many); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("more sectors than a deadline holds must be refused: %v", err)
	}
}

func TestVersionsAndPartitions(t *testing.T) {
	if n, err := ffi.GetNumPartitionForFallbackPost(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, 5); err != nil || n != 3 {
		t.Fatalf("GetNumPartitionForFallbackPost = %d, %v", n, err)
	}
	if _, err := ffi.GetNumPartitionForFallbackPost(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, 5); err == nil {
		t.Fatal("WinningPoSt has no partitions to count")
	}
	if v, err := ffi.GetSealVersion(abi.RegisteredSealProof_StackedDrg2KiBV1_1); err != nil || v != "StackedDrg2KiBV1_1" {
		t.Fatalf("GetSealVersion = %q, %v", v, err)
	}
	if v, err := ffi.GetPoStVersion(abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1); err != nil || v != "StackedDrgWindow32GiBV1_2" {
		t.Fatalf("GetPoStVersion = %q, %v", v, err)
	}
	if _, err := ffi.GetPoStVersion(99); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("unknown PoSt type: %v", err)
	}
}

func sealedCID(t *testing.T, b byte) cid.Cid {
	comm := make([]byte, 32)
	for i := range comm {
		comm[i] = b
	}
	comm[31] = 0
	return mustCID(ffi.ReplicaCommitmentToCID(comm))
}

func sector(t *testing.T, dir string, n abi.SectorNumber, typ abi.RegisteredPoStProof) ffi.PrivateSectorInfo {
	return ffi.PrivateSectorInfo{
		SectorInfo:       proof.SectorInfo{SectorNumber: n, SealedCID: sealedCID(t, byte(n))},
		CacheDirPath:     filepath.Join(dir, "cache"),
		PoStProofType:    typ,
		SealedSectorPath: filepath.Join(dir, "sealed"),
	}
}

func TestSortedPrivateSectorInfo(t *testing.T) {
	dir := t.TempDir()
	a := sector(t, dir, 5, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	b := sector(t, dir, 2, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	dup := a
	dup.CacheDirPath = "other"
	s := ffi.NewSortedPrivateSectorInfo(a, b, dup)
	v := s.Values()
	if len(v) != 2 || v[0].SectorNumber != 2 || v[1].SectorNumber != 5 || v[1].CacheDirPath != a.CacheDirPath {
		t.Fatalf("NewSortedPrivateSectorInfo: %+v", v)
	}
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back ffi.SortedPrivateSectorInfo
	if err := json.Unmarshal(js, &back); err != nil || !reflect.DeepEqual(back.Values(), v) {
		t.Fatalf("JSON round trip: %v", err)
	}
	part, err := ffi.SplitSortedPrivateSectorInfo(t.Context(), s, 1, 2)
	if err != nil || len(part.Values()) != 1 || part.Values()[0].SectorNumber != 5 {
		t.Fatalf("SplitSortedPrivateSectorInfo: %+v, %v", part, err)
	}
	if _, err := ffi.SplitSortedPrivateSectorInfo(t.Context(), s, 1, 3); err == nil {
		t.Fatal("a split past the end must fail")
	}
}

// Without sealed sector files (cuzk's test data keeps none), the path-based functions must
// report the sectors as faulty (WindowPoSt) or fail cleanly; the end-to-end check with real
// sectors is the Rust test window_post_from_sealed_sectors_verifies and the interop test.
func TestPathBasedFunctionsWithoutFiles(t *testing.T) {
	dir := t.TempDir()
	window := abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1
	if _, err := ffi.GenerateSingleVanillaProof(sector(t, dir, 1, window), []uint64{1, 2}); !errors.Is(err, cuzk.ErrProofFailed) {
		t.Fatalf("GenerateSingleVanillaProof without files: %v", err)
	}
	if _, err := ffi.GenerateSingleVanillaProof(sector(t, dir, 1, window), nil); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("GenerateSingleVanillaProof without challenges: %v", err)
	}

	sectors := ffi.NewSortedPrivateSectorInfo(sector(t, dir, 7, window), sector(t, dir, 3, window))
	proofs, faulty, err := ffi.GenerateWindowPoSt(1000, sectors, seven)
	if err == nil || proofs != nil || !reflect.DeepEqual(faulty, []abi.SectorNumber{3, 7}) {
		t.Fatalf("GenerateWindowPoSt without files: %v, faulty %v, %v", proofs, faulty, err)
	}
	if !strings.Contains(err.Error(), "faulty sectors [3 7]") {
		t.Fatalf("the error must name the faulty sectors: %v", err)
	}

	mixed := ffi.NewSortedPrivateSectorInfo(sector(t, dir, 1, window), sector(t, dir, 2, abi.RegisteredPoStProof_StackedDrgWindow8MiBV1_1))
	if _, faulty, err := ffi.GenerateWindowPoSt(1000, mixed, seven); !errors.Is(err, cuzk.ErrInvalidInput) || faulty != nil {
		t.Fatalf("mixed PoSt types: faulty %v, %v", faulty, err)
	}
	if _, faulty, err := ffi.GenerateWindowPoSt(1000, ffi.SortedPrivateSectorInfo{}, seven); !errors.Is(err, cuzk.ErrInvalidInput) || faulty != nil {
		t.Fatalf("no sectors: faulty %v, %v", faulty, err)
	}
	bad := sector(t, dir, 1, window)
	bad.SealedCID = mustCID(ffi.DataCommitmentToCID(make([]byte, 32)))
	if _, _, err := ffi.GenerateWindowPoSt(1000, ffi.NewSortedPrivateSectorInfo(bad), seven); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("an unsealed CID as SealedCID: %v", err)
	}

	winning := ffi.NewSortedPrivateSectorInfo(sector(t, dir, 4, abi.RegisteredPoStProof_StackedDrgWinning2KiBV1))
	if _, err := ffi.GenerateWinningPoSt(1000, winning, seven); !errors.Is(err, cuzk.ErrProofFailed) || !strings.Contains(err.Error(), "sector 4") {
		t.Fatalf("GenerateWinningPoSt without files: %v", err)
	}

	oldR, newR := sealedCID(t, 1), sealedCID(t, 2)
	d := mustCID(ffi.DataCommitmentToCID(make([]byte, 32)))
	p := func(name string) string { return filepath.Join(dir, name) }
	if _, err := ffi.SectorUpdate.GenerateUpdateVanillaProofs(abi.RegisteredUpdateProof_StackedDrg2KiBV1, oldR, newR, d, p("new"), p("newcache"), p("key"), p("keycache")); !errors.Is(err, cuzk.ErrProofFailed) {
		t.Fatalf("GenerateUpdateVanillaProofs without files: %v", err)
	}
	if _, err := ffi.SectorUpdate.GenerateUpdateProof(abi.RegisteredUpdateProof_StackedDrg2KiBV1, oldR, newR, d, p("new"), p("newcache"), p("key"), p("keycache")); !errors.Is(err, cuzk.ErrProofFailed) {
		t.Fatalf("GenerateUpdateProof without files: %v", err)
	}
	if _, err := ffi.SectorUpdate.GenerateUpdateProof(abi.RegisteredUpdateProof_StackedDrg2KiBV1, d, newR, d, p("new"), p("newcache"), p("key"), p("keycache")); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("an unsealed CID as the old sealed CID: %v", err)
	}
	if _, err := ffi.SectorUpdate.GenerateUpdateVanillaProofs(abi.RegisteredUpdateProof_StackedDrg2KiBV1, oldR, newR, d, "", p("newcache"), p("key"), p("keycache")); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("an empty path: %v", err)
	}
}
