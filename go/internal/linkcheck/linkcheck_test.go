//go:build linkcheck

package linkcheck_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/cuzk-dev/cuzk/go/internal/linkcheck"
)

// The binary links both libraries; both work in one process.
func TestCuzkBesideAnotherRustStaticLibrary(t *testing.T) {
	one, ok := linkcheck.G1Mul(1)
	// The compressed BLS12-381 G1 generator.
	gen, _ := hex.DecodeString("97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb")
	if !ok || !bytes.Equal(one, gen) {
		t.Fatalf("stand-in library: 1·G1 = %x", one)
	}
	e, err := cuzk.Open(cuzk.Config{TOML: "synthesis_workers = 1\nbackend = \"cpu\""})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sum, err := e.Summary()
	if err != nil || sum.Backend != "cpu" {
		t.Fatalf("cuzk in the same binary: %+v %v", sum, err)
	}
}
