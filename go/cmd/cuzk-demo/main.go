// Command cuzk-demo proves every 2 KiB proof kind through the Go package cuzk (concurrently,
// on one engine) and once through the filecoin-ffi-compatible package ffi, then prints a table
// and the engine status. Inputs come from `cuzk testdata generate`; parameters from
// FIL_PROOFS_PARAMETER_CACHE (`cuzk params generate all-2k`).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/cuzk-dev/cuzk/go/ffi"
	"github.com/cuzk-dev/cuzk/go/internal/testdata"
	"github.com/filecoin-project/go-state-types/abi"
)

type fatalT struct{}

func (fatalT) Helper()           {}
func (fatalT) Fatal(args ...any) { fmt.Fprintln(os.Stderr, args...); os.Exit(1) }
func (fatalT) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
func check(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	t := fatalT{}
	d := testdata.Load(t)
	e, err := cuzk.Open(cuzk.Config{})
	check(err, "open")
	defer e.Close()

	type job struct {
		kind string
		id   cuzk.JobID
	}
	var jobs []job
	submit := func(kind string, id cuzk.JobID, err error) {
		check(err, kind)
		jobs = append(jobs, job{kind, id})
	}
	start := time.Now()
	for i, p := range d.Porep {
		id, err := e.SubmitPoRep(d.File(t, p.C1File), p.Registered, p.Sector, d.MinerID)
		submit([]string{"PoRep V1_1", "PoRep SyntheticPoRep"}[i], id, err)
	}
	s := d.Snap
	id, err := e.SubmitSnapDeals(s.Registered, d.Files(t, s.VanillaFiles), testdata.Hex(t, s.CommROld), testdata.Hex(t, s.CommRNew), testdata.Hex(t, s.CommDNew))
	submit("SnapDeals", id, err)
	w := d.Window
	id, err = e.SubmitWindowPoSt(w.Registered, testdata.Hex(t, w.Randomness), d.MinerID, d.Files(t, w.VanillaFiles), w.Partition)
	submit("WindowPoSt", id, err)
	wn := d.Winning
	id, err = e.SubmitWinningPoSt(wn.Registered, testdata.Hex(t, wn.Randomness), d.MinerID, d.Files(t, wn.VanillaFiles))
	submit("WinningPoSt", id, err)

	fmt.Printf("%-22s %10s %10s %10s %10s %10s %9s\n", "kind", "partitions", "queue ms", "synth ms", "prove ms", "verify ms", "verified")
	for _, j := range jobs {
		proof, tm, err := e.AwaitTimed(context.Background(), j.id)
		check(err, j.kind)
		fmt.Printf("%-22s %10d %10.0f %10.0f %10.0f %10.1f %9v\n", j.kind, len(proof)/192, tm.QueueMs, tm.SynthMs, tm.ProveMs, tm.VerifyMs, true)
	}
	fmt.Printf("all kinds through package cuzk in %.1fs (each proof self-checked with filecoin-proofs' verifier)\n", time.Since(start).Seconds())

	t0 := time.Now()
	posts, err := ffi.GenerateWinningPoStWithVanilla(abi.RegisteredPoStProof(wn.Registered), abi.ActorID(d.MinerID), testdata.Hex(t, wn.Randomness), d.Files(t, wn.VanillaFiles))
	check(err, "ffi.GenerateWinningPoStWithVanilla")
	fmt.Printf("ffi.GenerateWinningPoStWithVanilla: %d proof(s), %d bytes, %.1fs\n", len(posts), len(posts[0].ProofBytes), time.Since(t0).Seconds())

	st, err := e.Status()
	check(err, "status")
	out, _ := json.MarshalIndent(st, "", "  ")
	fmt.Printf("engine status:\n%s\n", out)
}
