package cuzk_test

// Fuzz targets for every entry point that takes bytes from the caller: engine config TOML,
// PoRep C1 output JSON, PoSt and SnapDeals vanilla proofs, commitments and randomness, proof
// bytes for each verifier, aggregation inputs and the node plan. Each is seeded from the 2 KiB
// test data (and, for the verifiers, from proofs made once per process), so the fuzzer starts
// from inputs the library accepts. `go test` replays the seeds and every input kept under
// testdata/fuzz; `make fuzz-test` (in `make test`) fuzzes each target briefly and `make fuzz`
// at length (scripts/fuzz.sh).
//
// What no input may do: panic (CodePanic is a panic caught at the boundary, a bug), return an
// error that is not a cuzk error, hang (each call has a deadline), or take the process down.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/cuzk-dev/cuzk/go/internal/testdata"
)

// callDeadline bounds one fuzzed call: a 2 KiB proof takes seconds here, so a call still
// running after this long is a hang. While fuzzing, a call that is still proving after
// inputBudget is cancelled instead, and the engine must then be idle again within
// callDeadline (see prove).
const callDeadline = 3 * time.Minute

// inputBudget: Go's fuzz worker panics ("deadlocked!", exit status 2, reported as "fuzzing
// process hung or terminated unexpectedly") when one input runs for 10 s, a limit it does not
// let a test change (internal/fuzz/worker.go; golang/go#56238). A mutated C1 or vanilla proof
// that still parses is proved, which takes up to half a minute at 2 KiB on 2 cores: `make fuzz`
// died that way in FuzzPoRepC1 on an input that replays cleanly in 34 s.
const inputBudget = 6 * time.Second

// idleWait is how long an input waits for the work of a cancelled one to drain before it is
// skipped.
const idleWait = 2 * time.Second

// fuzzing reports whether this process runs a fuzz target's inputs (`go test -fuzz`, the
// coordinator and its workers) rather than replaying the seeds and kept inputs.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// drain tracks the work of inputs cancelled past inputBudget: since when the engine has been
// busy with it. Every later input first waits for the engine to be idle (skipping itself if it
// is not within idleWait), so cancelled work must drain: still busy after callDeadline is a
// hang.
var drain struct {
	sync.Mutex
	busySince time.Time
}

// waitDrained returns when nothing is queued or in flight, skips the input if the engine is still
// busy after idleWait, and fails if it has been busy for callDeadline since an input was cancelled.
func waitDrained(t testing.TB, e *cuzk.Engine) {
	t.Helper()
	drain.Lock()
	defer drain.Unlock()
	if drain.busySince.IsZero() {
		return
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	give := time.Now().Add(idleWait)
	for {
		s, err := e.Summary()
		if err != nil {
			t.Fatal(err)
		}
		if s.PartitionsQueued == 0 && s.PartitionsInFlight == 0 {
			drain.busySince = time.Time{}
			return
		}
		if busy := time.Since(drain.busySince); busy > callDeadline {
			t.Fatalf("engine still busy %v after a cancelled input: %d partitions queued, %d in flight",
				busy.Round(time.Second), s.PartitionsQueued, s.PartitionsInFlight)
		}
		if time.Now().After(give) {
			t.Skip("the engine is still finishing a cancelled input")
		}
		<-tick.C
	}
}

// checkSane fails on what no input may cause.
func checkSane(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ce *cuzk.Error
	if !errors.As(err, &ce) {
		t.Fatalf("%s: not a cuzk error: %v", what, err)
	}
	if ce.Code == cuzk.CodePanic {
		t.Fatalf("%s: panic caught at the C boundary: %v", what, err)
	}
}

// prove submits and awaits one job on the default engine, failing on a hang.
func prove(t testing.TB, what string, submit func(e *cuzk.Engine) (cuzk.JobID, error)) ([]byte, error) {
	t.Helper()
	e, err := cuzk.Default()
	if err != nil {
		t.Fatal(err)
	}
	fuzz := fuzzing()
	budget := callDeadline
	if fuzz {
		budget = inputBudget
		waitDrained(t, e)
	}
	id, err := submit(e)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	proof, err := e.Await(ctx, id)
	if errors.Is(err, context.DeadlineExceeded) {
		if !fuzz {
			t.Fatalf("%s: no result after %v", what, callDeadline)
		}
		// It passed every check at submit and is being proved. Await has released it (the
		// job is cancelled; its running partitions stop at their next step): the next input
		// waits for that work to drain.
		drain.Lock()
		if drain.busySince.IsZero() {
			drain.busySince = time.Now()
		}
		drain.Unlock()
		return nil, nil
	}
	if err == nil && (len(proof) == 0 || len(proof)%192 != 0) {
		t.Fatalf("%s: %d proof bytes", what, len(proof))
	}
	return proof, err
}

// u64s reads b as little-endian uint64s (a fuzzer-friendly list encoding).
func u64s(b []byte) []uint64 {
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

// u64Bytes is the inverse of u64s.
func u64Bytes(v ...uint64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], x)
	}
	return out
}

// c1Values are the C1 output's ticket and seed (the verifier's chain randomness).
type c1Values struct {
	Ticket [32]byte `json:"ticket"`
	Seed   [32]byte `json:"seed"`
}

// seedProofs are valid proofs of the test data, to seed the verifiers: proved once and kept
// under $CUZK_CACHE/fuzz-seeds (every fuzzing process, and each of its workers, needs them;
// a 2 KiB PoRep proof takes half a minute on two cores). A cached proof is used only while it
// still verifies (new parameters or test data make it prove again).
type seedProofs struct {
	porep     []byte // Porep[0]'s seal proof, also its circuit proof (one partition at 2 KiB)
	winning   []byte
	window    []byte
	snap      []byte
	aggregate []byte // SnarkPack V2 of porep twice
}

var (
	seedsMu sync.Mutex
	seeds   seedProofs
)

func seedDir() string {
	cache := os.Getenv("CUZK_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "cuzk")
	}
	return filepath.Join(cache, "fuzz-seeds")
}

// cachedProof returns the proof kept under name if verify accepts it, else makes, keeps and
// returns a new one.
func cachedProof(t testing.TB, name string, verify func([]byte) (bool, error), make func() ([]byte, error)) []byte {
	t.Helper()
	path := filepath.Join(seedDir(), name)
	if b, err := os.ReadFile(path); err == nil {
		if ok, err := verify(b); ok && err == nil {
			return b
		}
	}
	b, err := make()
	if err != nil {
		t.Fatalf("proving the %s seed: %v", name, err)
	}
	if ok, err := verify(b); !ok || err != nil {
		t.Fatalf("the %s seed does not verify: %v %v", name, ok, err)
	}
	if err := os.MkdirAll(seedDir(), 0o755); err == nil {
		tmp := path + ".tmp"
		if os.WriteFile(tmp, b, 0o644) == nil {
			_ = os.Rename(tmp, path)
		}
	}
	return b
}

func mustProve(t testing.TB, what string, submit func(e *cuzk.Engine) (cuzk.JobID, error)) func() ([]byte, error) {
	return func() ([]byte, error) { return prove(t, what, submit) }
}

func verifySealSeed(t testing.TB, d *testdata.Data) func([]byte) (bool, error) {
	p := d.Porep[0]
	c1 := c1Of(t, d, p)
	return func(proof []byte) (bool, error) {
		return cuzk.VerifySeal(p.Registered, testdata.Hex(t, p.CommR), testdata.Hex(t, p.CommD), d.MinerID, p.Sector, c1.Ticket[:], c1.Seed[:], proof)
	}
}

func winningSectors(t testing.TB, d *testdata.Data) []cuzk.Sector {
	return []cuzk.Sector{{Registered: d.Winning.Registered, Number: d.Porep[0].Sector, CommR: testdata.Hex(t, d.Porep[0].CommR)}}
}

func windowSectors(t testing.TB, d *testdata.Data) []cuzk.Sector {
	w := d.Window.Registered
	return []cuzk.Sector{
		{Registered: w, Number: d.Porep[0].Sector, CommR: testdata.Hex(t, d.Porep[0].CommR)},
		{Registered: w, Number: d.Porep[1].Sector, CommR: testdata.Hex(t, d.Porep[1].CommR)},
	}
}

// sealSeed is Porep[0]'s seal proof.
func sealSeed(t testing.TB, d *testdata.Data) []byte {
	seedsMu.Lock()
	defer seedsMu.Unlock()
	if seeds.porep == nil {
		p := d.Porep[0]
		seeds.porep = cachedProof(t, "porep", verifySealSeed(t, d), mustProve(t, "porep", func(e *cuzk.Engine) (cuzk.JobID, error) {
			return e.SubmitPoRepCircuitProofs(d.File(t, p.C1File), p.Sector)
		}))
	}
	return seeds.porep
}

// postSeeds are the WinningPoSt and WindowPoSt (partition 0) proofs.
func postSeeds(t testing.TB, d *testdata.Data) (winning, window []byte) {
	seedsMu.Lock()
	defer seedsMu.Unlock()
	if seeds.winning == nil {
		w, win := d.Winning, d.Window
		seeds.winning = cachedProof(t, "winning", func(b []byte) (bool, error) {
			return cuzk.VerifyWinningPoSt(testdata.Hex(t, w.Randomness), d.MinerID, winningSectors(t, d), []cuzk.PoStProof{{Registered: w.Registered, Bytes: b}})
		}, mustProve(t, "winning", func(e *cuzk.Engine) (cuzk.JobID, error) {
			return e.SubmitWinningPoSt(w.Registered, testdata.Hex(t, w.Randomness), d.MinerID, d.Files(t, w.VanillaFiles))
		}))
		seeds.window = cachedProof(t, "window", func(b []byte) (bool, error) {
			return cuzk.VerifyWindowPoSt(testdata.Hex(t, win.Randomness), d.MinerID, windowSectors(t, d), []cuzk.PoStProof{{Registered: win.Registered, Bytes: b}})
		}, mustProve(t, "window", func(e *cuzk.Engine) (cuzk.JobID, error) {
			return e.SubmitWindowPoSt(win.Registered, testdata.Hex(t, win.Randomness), d.MinerID, d.Files(t, win.VanillaFiles), win.Partition)
		}))
	}
	return seeds.winning, seeds.window
}

// snapSeed is the SnapDeals update proof.
func snapSeed(t testing.TB, d *testdata.Data) []byte {
	seedsMu.Lock()
	defer seedsMu.Unlock()
	if seeds.snap == nil {
		s := d.Snap
		old, newR, newD := testdata.Hex(t, s.CommROld), testdata.Hex(t, s.CommRNew), testdata.Hex(t, s.CommDNew)
		seeds.snap = cachedProof(t, "snap", func(b []byte) (bool, error) {
			return cuzk.VerifyUpdate(s.Registered, old, newR, newD, b)
		}, mustProve(t, "snap", func(e *cuzk.Engine) (cuzk.JobID, error) {
			return e.SubmitSnapDeals(s.Registered, d.Files(t, s.VanillaFiles), old, newR, newD)
		}))
	}
	return seeds.snap
}

// aggregateSeed is a SnarkPack V2 aggregate of Porep[0]'s proof twice.
func aggregateSeed(t testing.TB, d *testdata.Data) []byte {
	proof := sealSeed(t, d)
	in := aggregationInputs(t, d)
	registered := d.Porep[0].Registered
	seedsMu.Lock()
	defer seedsMu.Unlock()
	if seeds.aggregate == nil {
		seeds.aggregate = cachedProof(t, "aggregate", func(b []byte) (bool, error) {
			return cuzk.VerifyAggregateSeals(registered, 1, d.MinerID, b, in)
		}, func() ([]byte, error) {
			return cuzk.AggregateSealProofs(registered, 1, [][]byte{in[0].CommR, in[1].CommR}, [][]byte{in[0].Seed, in[1].Seed}, [][]byte{proof, proof})
		})
	}
	return seeds.aggregate
}

func c1Of(t testing.TB, d *testdata.Data, s testdata.Sector) c1Values {
	t.Helper()
	var c1 c1Values
	if err := json.Unmarshal(d.File(t, s.C1File), &c1); err != nil {
		t.Fatal(err)
	}
	return c1
}

func aggregationInputs(t testing.TB, d *testdata.Data) []cuzk.AggregationInput {
	t.Helper()
	var in []cuzk.AggregationInput
	for _, s := range []testdata.Sector{d.Porep[0], d.Porep[0]} {
		c1 := c1Of(t, d, s)
		in = append(in, cuzk.AggregationInput{
			Sector: s.Sector, CommR: testdata.Hex(t, s.CommR), CommD: testdata.Hex(t, s.CommD),
			Ticket: c1.Ticket[:], Seed: c1.Seed[:],
		})
	}
	return in
}

// FuzzEngineConfig: any TOML either opens an engine (closed again) or is refused; none may
// make the library allocate without bound, spawn without bound or abort.
func FuzzEngineConfig(f *testing.F) {
	f.Add("")
	f.Add("synthesis_workers = 1\nprover_workers = 1\npool_buffers = 2\nbackend = \"cpu\"\n")
	f.Add("memory_budget = 1073741824\nbuffer_constraints = 65536\npce = false\n")
	f.Add("devices = [0, 0]\n")
	f.Add("backend = \"opencl\"\n")
	f.Add("pool_buffers = 100000\nbuffer_constraints = 1099511627776\n")
	f.Add("pool_buffers = 4000\nbuffer_constraints = 1099511627776\n")
	f.Add("synthesis_workers = 1000000\n")
	f.Add("prover_workers = 18446744073709551615\n")
	f.Fuzz(func(t *testing.T, toml string) {
		e, err := cuzk.Open(cuzk.Config{TOML: toml})
		checkSane(t, "Open", err)
		if err == nil {
			if err := e.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
	})
}

// FuzzPoRepC1: C1 output JSON with any proof type, sector and miner.
func FuzzPoRepC1(f *testing.F) {
	d := testdata.Load(f)
	// Seeds that fail before proving (a valid C1 proves for half a minute here; the proving
	// path has its own tests): another seal type, a truncated C1, a 32 GiB C1 shape.
	for _, p := range d.Porep {
		c1 := d.File(f, p.C1File)
		f.Add(c1, p.Registered+1, p.Sector, d.MinerID)
		f.Add(c1[:len(c1)-1], cuzk.RegisteredFromC1, p.Sector, d.MinerID)
	}
	f.Add([]byte(`{"registered_proof":"StackedDrg32GiBV1_1","vanilla_proofs":{},"comm_r":[],"comm_d":[],"replica_id":[],"seed":[],"ticket":[]}`), cuzk.RegisteredFromC1, uint64(1), uint64(1000))
	f.Fuzz(func(t *testing.T, c1 []byte, registered, sector, miner uint64) {
		_, err := prove(t, "PoRep", func(e *cuzk.Engine) (cuzk.JobID, error) {
			return e.SubmitPoRep(c1, registered, sector, miner)
		})
		checkSane(t, "PoRep", err)
	})
}

// FuzzPoRepCircuitProofs: C1 output JSON for the circuit proofs (no miner id).
func FuzzPoRepCircuitProofs(f *testing.F) {
	d := testdata.Load(f)
	// Truncated C1s (a valid one proves for half a minute here; see FuzzPoRepC1).
	for _, p := range d.Porep {
		c1 := d.File(f, p.C1File)
		f.Add(c1[:len(c1)/2], p.Sector)
		f.Add(c1[:len(c1)-2], p.Sector)
	}
	f.Fuzz(func(t *testing.T, c1 []byte, sector uint64) {
		_, err := prove(t, "PoRep circuit proofs", func(e *cuzk.Engine) (cuzk.JobID, error) {
			return e.SubmitPoRepCircuitProofs(c1, sector)
		})
		checkSane(t, "PoRep circuit proofs", err)
	})
}

// FuzzWinningPoSt: vanilla proof bytes, randomness, proof type and miner.
func FuzzWinningPoSt(f *testing.F) {
	d := testdata.Load(f)
	w := d.Winning
	f.Add(w.Registered, testdata.Hex(f, w.Randomness), d.MinerID, d.File(f, w.VanillaFiles[0]))
	f.Add(w.Registered, testdata.Hex(f, w.Randomness), d.MinerID, []byte{})
	f.Fuzz(func(t *testing.T, registered uint64, randomness []byte, miner uint64, vanilla []byte) {
		_, err := prove(t, "WinningPoSt", func(e *cuzk.Engine) (cuzk.JobID, error) {
			return e.SubmitWinningPoSt(registered, randomness, miner, [][]byte{vanilla})
		})
		checkSane(t, "WinningPoSt", err)
	})
}

// FuzzWindowPoSt: two sectors' vanilla proofs, randomness, proof type and partition index.
func FuzzWindowPoSt(f *testing.F) {
	d := testdata.Load(f)
	w := d.Window
	v := d.Files(f, w.VanillaFiles)
	f.Add(w.Registered, testdata.Hex(f, w.Randomness), d.MinerID, v[0], v[1], w.Partition)
	f.Add(uint64(5), testdata.Hex(f, w.Randomness), d.MinerID, v[0], v[1], uint64(1))
	f.Fuzz(func(t *testing.T, registered uint64, randomness []byte, miner uint64, v0, v1 []byte, partition uint64) {
		_, err := prove(t, "WindowPoSt", func(e *cuzk.Engine) (cuzk.JobID, error) {
			return e.SubmitWindowPoSt(registered, randomness, miner, [][]byte{v0, v1}, partition)
		})
		checkSane(t, "WindowPoSt", err)
	})
}

// FuzzSnapDeals: partition vanilla proof bytes and the three commitments.
func FuzzSnapDeals(f *testing.F) {
	d := testdata.Load(f)
	s := d.Snap
	// A valid request proves for 20 s here (the proving path has its own tests): seeds with
	// another update type and with a swapped commitment.
	v := d.File(f, s.VanillaFiles[0])
	old, newR, newD := testdata.Hex(f, s.CommROld), testdata.Hex(f, s.CommRNew), testdata.Hex(f, s.CommDNew)
	f.Add(s.Registered+1, v, old, newR, newD)
	f.Add(s.Registered, v[:len(v)/2], old, newR, newD)
	f.Fuzz(func(t *testing.T, registered uint64, vanilla, commROld, commRNew, commDNew []byte) {
		_, err := prove(t, "SnapDeals", func(e *cuzk.Engine) (cuzk.JobID, error) {
			return e.SubmitSnapDeals(registered, [][]byte{vanilla}, commROld, commRNew, commDNew)
		})
		checkSane(t, "SnapDeals", err)
	})
}

// FuzzVerifySeal: every argument of the seal verifier, seeded with a valid proof (which
// must verify).
func FuzzVerifySeal(f *testing.F) {
	d := testdata.Load(f)
	p := d.Porep[0]
	c1 := c1Of(f, d, p)
	valid := sealSeed(f, d)
	validR, validD := testdata.Hex(f, p.CommR), testdata.Hex(f, p.CommD)
	f.Add(p.Registered, validR, validD, d.MinerID, p.Sector, c1.Ticket[:], c1.Seed[:], valid)
	f.Fuzz(func(t *testing.T, registered uint64, commR, commD []byte, miner, sector uint64, ticket, seed, proof []byte) {
		ok, err := cuzk.VerifySeal(registered, commR, commD, miner, sector, ticket, seed, proof)
		checkSane(t, "VerifySeal", err)
		if registered == p.Registered && miner == d.MinerID && sector == p.Sector && bytes.Equal(proof, valid) &&
			bytes.Equal(commR, validR) && bytes.Equal(commD, validD) &&
			bytes.Equal(ticket, c1.Ticket[:]) && bytes.Equal(seed, c1.Seed[:]) && (!ok || err != nil) {
			t.Fatalf("the valid seal proof did not verify: %v", err)
		}
	})
}

// FuzzVerifyPoSt: the WinningPoSt and WindowPoSt verifiers over one or two challenged
// sectors (proof type and number pairs as little-endian uint64s), seeded with valid proofs
// (checked to verify when they are made or loaded).
func FuzzVerifyPoSt(f *testing.F) {
	d := testdata.Load(f)
	winningProof, windowProof := postSeeds(f, d)
	commR0, commR1 := testdata.Hex(f, d.Porep[0].CommR), testdata.Hex(f, d.Porep[1].CommR)
	win, w := d.Winning, d.Window
	f.Add(true, testdata.Hex(f, win.Randomness), d.MinerID, u64Bytes(win.Registered, d.Porep[0].Sector), commR0, commR1, win.Registered, winningProof)
	f.Add(false, testdata.Hex(f, w.Randomness), d.MinerID, u64Bytes(w.Registered, d.Porep[0].Sector, w.Registered, d.Porep[1].Sector), commR0, commR1, w.Registered, windowProof)
	f.Fuzz(func(t *testing.T, winning bool, randomness []byte, miner uint64, sectorList, commR0, commR1 []byte, proofType uint64, proof []byte) {
		pairs := u64s(sectorList)
		var sectors []cuzk.Sector
		for i := 0; i+1 < len(pairs) && i < 4; i += 2 {
			commR := commR0
			if i > 0 {
				commR = commR1
			}
			sectors = append(sectors, cuzk.Sector{Registered: pairs[i], Number: pairs[i+1], CommR: commR})
		}
		verify := cuzk.VerifyWindowPoSt
		if winning {
			verify = cuzk.VerifyWinningPoSt
		}
		_, err := verify(randomness, miner, sectors, []cuzk.PoStProof{{Registered: proofType, Bytes: proof}})
		checkSane(t, "VerifyPoSt", err)
	})
}

// FuzzVerifyUpdate: the SnapDeals verifier, seeded with a valid proof (which must verify).
func FuzzVerifyUpdate(f *testing.F) {
	d := testdata.Load(f)
	s := d.Snap
	valid := snapSeed(f, d)
	old, newR, newD := testdata.Hex(f, s.CommROld), testdata.Hex(f, s.CommRNew), testdata.Hex(f, s.CommDNew)
	f.Add(s.Registered, old, newR, newD, valid)
	f.Fuzz(func(t *testing.T, registered uint64, commROld, commRNew, commDNew, proof []byte) {
		ok, err := cuzk.VerifyUpdate(registered, commROld, commRNew, commDNew, proof)
		checkSane(t, "VerifyUpdate", err)
		if registered == s.Registered && bytes.Equal(commROld, old) && bytes.Equal(commRNew, newR) &&
			bytes.Equal(commDNew, newD) && bytes.Equal(proof, valid) && (!ok || err != nil) {
			t.Fatalf("the valid update proof did not verify: %v", err)
		}
	})
}

// FuzzAggregateSeals: SnarkPack aggregation of two circuit proofs and its verifier, seeded
// with a valid proof and a valid aggregate of it twice (checked when made or loaded; the
// unchanged seed must verify).
func FuzzAggregateSeals(f *testing.F) {
	d := testdata.Load(f)
	proof, aggregate := sealSeed(f, d), aggregateSeed(f, d)
	in := aggregationInputs(f, d)
	registered := d.Porep[0].Registered
	f.Add(registered, uint64(1), d.MinerID, proof, proof, in[0].CommR, in[0].Seed, aggregate)
	f.Fuzz(func(t *testing.T, registered, aggregation, miner uint64, proof0, proof1, commR0, seed0, agg []byte) {
		_, err := cuzk.AggregateSealProofs(registered, aggregation,
			[][]byte{commR0, in[1].CommR}, [][]byte{seed0, in[1].Seed}, [][]byte{proof0, proof1})
		checkSane(t, "AggregateSealProofs", err)
		inputs := []cuzk.AggregationInput{in[0], in[1]}
		inputs[0].CommR, inputs[0].Seed = commR0, seed0
		ok, err := cuzk.VerifyAggregateSeals(registered, aggregation, miner, agg, inputs)
		checkSane(t, "VerifyAggregateSeals", err)
		unchanged := registered == d.Porep[0].Registered && aggregation == 1 && miner == d.MinerID &&
			bytes.Equal(agg, aggregate) && bytes.Equal(commR0, in[0].CommR) && bytes.Equal(seed0, in[0].Seed)
		if unchanged && (!ok || err != nil) {
			t.Fatalf("the valid aggregate did not verify: %v", err)
		}
	})
}

// FuzzSectorChallenges: the PoSt challenge functions (randomness, proof type, sector list).
func FuzzSectorChallenges(f *testing.F) {
	d := testdata.Load(f)
	f.Add(d.Winning.Registered, testdata.Hex(f, d.Winning.Randomness), d.MinerID, uint64(3), u64Bytes(1, 2, 3))
	f.Add(d.Window.Registered, testdata.Hex(f, d.Window.Randomness), d.MinerID, uint64(1<<62), u64Bytes(7))
	f.Fuzz(func(t *testing.T, registered uint64, randomness []byte, miner, eligible uint64, sectorList []byte) {
		_, err := cuzk.WinningPoStSectorChallenge(registered, randomness, miner, eligible)
		checkSane(t, "WinningPoStSectorChallenge", err)
		_, err = cuzk.FallbackSectorChallenges(registered, randomness, miner, u64s(sectorList))
		checkSane(t, "FallbackSectorChallenges", err)
		_, err = cuzk.NumPartitionsForFallbackPoSt(registered, eligible)
		checkSane(t, "NumPartitionsForFallbackPoSt", err)
	})
}

// FuzzPlan: the node planner with any memory, cores and circuit mix (comma-separated).
func FuzzPlan(f *testing.F) {
	f.Add(uint64(256<<30), uint64(80<<30), 64, "porep-32g,snap-32g,window-32g,winning-32g")
	f.Add(uint64(1), uint64(0), 0, "porep-2k")
	f.Add(^uint64(0), ^uint64(0), 1<<30, "window-64g,,nope")
	f.Fuzz(func(t *testing.T, ram, gpu uint64, cores int, mix string) {
		node := cuzk.PlanNode{RAMBytes: ram, Cores: cores}
		if gpu > 0 {
			node.GPUBytes = []uint64{gpu}
		}
		_, err := cuzk.Plan(node, strings.Split(mix, ","))
		checkSane(t, "Plan", err)
	})
}
