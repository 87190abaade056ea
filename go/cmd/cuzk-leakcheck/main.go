// Command cuzk-leakcheck calls every part of the Go package once through cgo, on valid and on
// bad input, for `make leak-test` to run under valgrind: no allocation made by cuzk (proof
// buffers, error messages, status JSON, challenge lists) may be left unfreed by the Go
// wrappers. valgrind alone cannot tell: a C pointer left in Go's garbage-collected heap looks
// reachable, so the program also checks the library's count of outputs not yet freed
// (cuzk.LiveOutputs) is back to zero at the end. It proves one 2 KiB WindowPoSt partition
// (the cheapest proof) and verifies it.
//
// Usage: cuzk-leakcheck (test data from $CUZK_TESTDATA or $CUZK_CACHE/testdata-2k).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/cuzk-dev/cuzk/go/internal/testdata"
)

// fatal is the testdata.T of a program: it exits on failure.
type fatal struct{}

func (fatal) Helper() {}
func (fatal) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"cuzk-leakcheck:"}, args...)...)
	os.Exit(1)
}

func check(what string, ok bool) {
	if !ok {
		fatal{}.Fatal(what)
	}
}

func main() {
	t := fatal{}
	check("no output outstanding at the start", cuzk.LiveOutputs() == 0)
	d := testdata.Load(t)
	w := d.Window
	rnd, vanilla := testdata.Hex(t, w.Randomness), d.Files(t, w.VanillaFiles)

	e, err := cuzk.Open(cuzk.Config{TOML: "synthesis_workers = 1\nbackend = \"cpu\"\npce = false"})
	check(fmt.Sprint("open: ", err), err == nil)
	_, err = cuzk.Open(cuzk.Config{TOML: "pool_buffers = 0"})
	check("a bad config is refused", errors.Is(err, cuzk.ErrInvalidInput))

	// A proof (buffer handed out and freed), its timings, and its verification.
	id, err := e.SubmitWindowPoSt(w.Registered, rnd, d.MinerID, vanilla, w.Partition)
	check(fmt.Sprint("submit: ", err), err == nil)
	proof, timings, err := e.AwaitTimed(context.Background(), id)
	check(fmt.Sprint("await: ", err), err == nil && len(proof) == 192 && timings.ProveMs > 0)
	sectors := []cuzk.Sector{
		{Registered: w.Registered, Number: d.Porep[0].Sector, CommR: testdata.Hex(t, d.Porep[0].CommR)},
		{Registered: w.Registered, Number: d.Porep[1].Sector, CommR: testdata.Hex(t, d.Porep[1].CommR)},
	}
	ok, err := cuzk.VerifyWindowPoSt(rnd, d.MinerID, sectors, []cuzk.PoStProof{{Registered: w.Registered, Bytes: proof}})
	check(fmt.Sprint("verify: ", ok, err), ok && err == nil)

	// Error paths: each returns a message the wrapper must free.
	_, err = e.SubmitWindowPoSt(77, rnd, d.MinerID, vanilla, 0)
	check("unknown proof type", errors.Is(err, cuzk.ErrInvalidInput))
	_, err = e.SubmitWindowPoSt(w.Registered, rnd, d.MinerID, [][]byte{[]byte("garbage"), vanilla[1]}, 0)
	check("garbage vanilla", err != nil)
	_, err = e.SubmitPoRep([]byte("{"), cuzk.RegisteredFromC1, 1, d.MinerID)
	check("truncated C1", errors.Is(err, cuzk.ErrInvalidInput))
	_, err = e.Await(context.Background(), 424242)
	check("unknown job", errors.Is(err, cuzk.ErrUnknownJob))
	ok, err = cuzk.VerifySeal(5, make([]byte, 32), make([]byte, 31), d.MinerID, 1, make([]byte, 32), make([]byte, 32), proof)
	check("seal verify of a short comm_d", !ok && err != nil)
	_, err = cuzk.AggregateSealProofs(5, 1, [][]byte{rnd, rnd}, [][]byte{rnd}, [][]byte{proof, proof})
	check("aggregation with a seed missing", errors.Is(err, cuzk.ErrInvalidInput))
	_, err = cuzk.AggregateSealProofs(5, 1, [][]byte{rnd, rnd}, [][]byte{rnd, rnd}, [][]byte{proof[:100], proof})
	check("aggregation of a truncated proof", err != nil)

	// Cancel and release, status (fixed and JSON), plan, challenges, devices.
	id, err = e.SubmitWindowPoSt(w.Registered, rnd, d.MinerID, vanilla, w.Partition)
	check(fmt.Sprint("submit: ", err), err == nil)
	check("cancel", e.Cancel(id) == nil)
	_, err = e.Await(context.Background(), id)
	check(fmt.Sprint("await of a cancelled job: ", err), err == nil || errors.Is(err, cuzk.ErrCancelled))
	_, err = e.Status()
	check(fmt.Sprint("status: ", err), err == nil)
	_, err = e.Summary()
	check(fmt.Sprint("summary: ", err), err == nil)
	_, err = cuzk.Plan(cuzk.PlanNode{RAMBytes: 256 << 30, GPUBytes: []uint64{80 << 30}, Cores: 64}, []string{"porep-32g", "winning-32g"})
	check(fmt.Sprint("plan: ", err), err == nil)
	_, err = cuzk.Plan(cuzk.PlanNode{RAMBytes: 1, Cores: 1}, []string{"nope"})
	check("plan of an unknown circuit", err != nil)
	_, err = cuzk.FallbackSectorChallenges(w.Registered, rnd, d.MinerID, []uint64{1, 2})
	check(fmt.Sprint("challenges: ", err), err == nil)
	_, err = cuzk.GPUDevices()
	check(fmt.Sprint("devices: ", err), err == nil)

	check("close", e.Close() == nil)
	check("second close", errors.Is(e.Close(), cuzk.ErrClosed))
	check(fmt.Sprintf("%d outputs of the library were never freed", cuzk.LiveOutputs()), cuzk.LiveOutputs() == 0)
	fmt.Println("cuzk-leakcheck: ok")
}
