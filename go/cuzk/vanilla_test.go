package cuzk_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cuzk-dev/cuzk/go/cuzk"
)

func TestFallbackSectorChallengesShape(t *testing.T) {
	r := bytes.Repeat([]byte{7}, 32)
	// WindowPoSt 2 KiB (abi 10): 10 challenges per sector, leaves below 64.
	c, err := cuzk.FallbackSectorChallenges(10, r, 1000, []uint64{5, 1, 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sectors) != 3 || c.Sectors[0] != 1 || c.Sectors[2] != 5 || len(c.Challenges) != 3 {
		t.Fatalf("sectors %v", c.Sectors)
	}
	for i, ch := range c.Challenges {
		if len(ch) != 10 {
			t.Fatalf("sector %d: %d challenges", c.Sectors[i], len(ch))
		}
		for _, leaf := range ch {
			if leaf >= 64 {
				t.Fatalf("sector %d: leaf %d out of range", c.Sectors[i], leaf)
			}
		}
	}
	if _, err := cuzk.FallbackSectorChallenges(10, r, 1000, nil); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("no sectors: %v", err)
	}
}

func TestVanillaInputChecks(t *testing.T) {
	r := bytes.Repeat([]byte{7}, 32)
	if _, err := cuzk.SingleVanillaProof(cuzk.Replica{Registered: 10, Sector: 1, CommR: r, CacheDir: "\xff", ReplicaPath: "/x"}, []uint64{0}); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("a non-UTF-8 path: %v", err)
	}
	if _, err := cuzk.SingleVanillaProof(cuzk.Replica{Registered: 10, Sector: 1, CommR: r[:5], CacheDir: "/x", ReplicaPath: "/x"}, []uint64{0}); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("a short comm_r: %v", err)
	}
	dir := t.TempDir()
	if _, err := cuzk.UpdateVanillaProofs(0, r, r, r, cuzk.UpdatePaths{NewReplica: dir + "/a", NewReplicaCache: dir, SectorKey: dir + "/b", SectorKeyCache: dir}); !errors.Is(err, cuzk.ErrProofFailed) {
		t.Fatalf("missing files: %v", err)
	}
	if _, err := cuzk.UpdateVanillaProofs(7, r, r, r, cuzk.UpdatePaths{}); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("unknown update proof: %v", err)
	}
	if v, err := cuzk.SealVersion(8); err != nil || v != "StackedDrg32GiBV1_1" {
		t.Fatalf("SealVersion(8) = %q, %v", v, err)
	}
	if n, err := cuzk.NumPartitionsForFallbackPoSt(13, 2349*2+1); err != nil || n != 3 {
		t.Fatalf("NumPartitionsForFallbackPoSt = %d, %v", n, err)
	}
}
