package linkcheck_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	cuzkffi "github.com/cuzk-dev/cuzk/go/ffi"
	"github.com/cuzk-dev/cuzk/go/internal/testdata"
	ffi "github.com/filecoin-project/filecoin-ffi"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
)

// filecoin-ffi's -Wl,-unresolved-symbols=ignore-all links a binary even when a symbol is
// missing, so the tests call into both libraries: Rust code and blst of each.

// filcrypto's Rust code and its blst: a BLS signature verifies, a tampered one does not.
func TestFilcryptoRuns(t *testing.T) {
	v, err := ffi.GetSealVersion(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	if err != nil || v == "" {
		t.Fatalf("GetSealVersion: %q %v", v, err)
	}
	var seed ffi.PrivateKeyGenSeed
	seed[0] = 7
	key := ffi.PrivateKeyGenerateWithSeed(seed)
	pub := ffi.PrivateKeyPublicKey(key)
	msg := []byte("cuzk link check")
	sig := ffi.PrivateKeySign(key, msg)
	if sig == nil || pub == nil {
		t.Fatal("filcrypto returned no signature or public key")
	}
	if !ffi.Verify(sig, []ffi.Digest{ffi.Hash(msg)}, []ffi.PublicKey{*pub}) {
		t.Fatal("filcrypto: a valid BLS signature does not verify")
	}
	if ffi.Verify(sig, []ffi.Digest{ffi.Hash([]byte("something else"))}, []ffi.PublicKey{*pub}) {
		t.Fatal("filcrypto: a signature verifies for another message")
	}
	t.Logf("filcrypto: seal version %s, BLS sign/verify ok", v)
}

// cuzk's Rust code and its blst: an engine proves a 2 KiB WinningPoSt (the engine verifies each
// proof with its own blst before returning it), and filecoin-ffi's verifier, linked into the
// same binary, accepts it.
func TestCuzkRuns(t *testing.T) {
	d := testdata.Load(t)
	e, err := cuzk.Open(cuzk.Config{TOML: "synthesis_workers = 1\nbackend = \"cpu\""})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sum, err := e.Summary()
	if err != nil || sum.Backend != "cpu" {
		t.Fatalf("Summary: %+v %v", sum, err)
	}
	w := d.Winning
	proofBytes, err := e.Prove(context.Background(), cuzk.WinningPoStRequest{
		Registered: w.Registered, Randomness: testdata.Hex(t, w.Randomness), Miner: d.MinerID, Vanilla: d.Files(t, w.VanillaFiles),
	})
	if err != nil || len(proofBytes) != 192 {
		t.Fatalf("cuzk WinningPoSt: %d bytes, %v", len(proofBytes), err)
	}
	if bytes.Equal(proofBytes, make([]byte, 192)) {
		t.Fatal("cuzk WinningPoSt: an all-zero proof")
	}
	sector := d.Porep[0]
	sealed, err := cuzkffi.ReplicaCommitmentToCID(testdata.Hex(t, sector.CommR))
	if err != nil {
		t.Fatal(err)
	}
	info := proof.WinningPoStVerifyInfo{
		Randomness: testdata.Hex(t, w.Randomness),
		Proofs:     []proof.PoStProof{{PoStProof: abi.RegisteredPoStProof(w.Registered), ProofBytes: proofBytes}},
		ChallengedSectors: []proof.SectorInfo{{
			SealProof: abi.RegisteredSealProof(sector.Registered), SectorNumber: abi.SectorNumber(sector.Sector), SealedCID: sealed,
		}},
		Prover: abi.ActorID(d.MinerID),
	}
	if ok, err := ffi.VerifyWinningPoSt(info); !ok || err != nil {
		t.Fatalf("filecoin-ffi rejects cuzk's WinningPoSt: %v %v", ok, err)
	}
	info.Proofs[0].ProofBytes = append([]byte{}, proofBytes...)
	info.Proofs[0].ProofBytes[7] ^= 1
	if ok, _ := ffi.VerifyWinningPoSt(info); ok {
		t.Fatal("filecoin-ffi accepts a tampered WinningPoSt")
	}
	t.Logf("cuzk: backend %s, WinningPoSt proof %x... verified by filecoin-ffi", sum.Backend, proofBytes[:8])
}
