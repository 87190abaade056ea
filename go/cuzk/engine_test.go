package cuzk_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/cuzk-dev/cuzk/go/internal/testdata"
)

func open(t *testing.T) *cuzk.Engine {
	t.Helper()
	e, err := cuzk.Open(cuzk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func submitWindow(t *testing.T, e *cuzk.Engine, d *testdata.Data) cuzk.JobID {
	t.Helper()
	w := d.Window
	id, err := e.SubmitWindowPoSt(w.Registered, testdata.Hex(t, w.Randomness), d.MinerID, d.Files(t, w.VanillaFiles), w.Partition)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestEveryKindConcurrently(t *testing.T) {
	d := testdata.Load(t)
	e := open(t)
	ctx := context.Background()
	type job struct {
		name       string
		id         cuzk.JobID
		partitions int
	}
	var jobs []job
	for i, p := range d.Porep {
		reg := p.Registered
		if i == 1 {
			reg = cuzk.RegisteredFromC1
		}
		id, err := e.SubmitPoRep(d.File(t, p.C1File), reg, p.Sector, d.MinerID)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{"porep", id, 1})
	}
	w := d.Winning
	id, err := e.SubmitWinningPoSt(w.Registered, testdata.Hex(t, w.Randomness), d.MinerID, d.Files(t, w.VanillaFiles))
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, job{"winning", id, 1}, job{"window", submitWindow(t, e, d), 1})
	s := d.Snap
	id, err = e.SubmitSnapDeals(s.Registered, d.Files(t, s.VanillaFiles), testdata.Hex(t, s.CommROld), testdata.Hex(t, s.CommRNew), testdata.Hex(t, s.CommDNew))
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, job{"snap", id, 1})
	for _, j := range jobs {
		proof, err := e.Await(ctx, j.id)
		if err != nil {
			t.Fatalf("%s: %v", j.name, err)
		}
		if len(proof) != 192*j.partitions {
			t.Fatalf("%s: %d bytes", j.name, len(proof))
		}
	}
	st, err := e.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st["completed"].(float64) != 5 {
		t.Fatalf("status: %v", st)
	}
}

func TestProveWithRequestValues(t *testing.T) {
	d := testdata.Load(t)
	e := open(t)
	w := d.Winning
	proof, err := e.Prove(context.Background(), cuzk.WinningPoStRequest{
		Registered: w.Registered, Randomness: testdata.Hex(t, w.Randomness), Miner: d.MinerID, Vanilla: d.Files(t, w.VanillaFiles),
	})
	if err != nil || len(proof) != 192 {
		t.Fatalf("Prove: %d bytes, %v", len(proof), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Prove(ctx, cuzk.WinningPoStRequest{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prove with a cancelled context: %v", err)
	}
	if _, err := e.Prove(context.Background(), cuzk.WindowPoStRequest{Registered: d.Window.Registered, Randomness: make([]byte, 32), Miner: d.MinerID}); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("empty vanilla through Prove: %v", err)
	}
}

func TestPreloadEvictAndDevices(t *testing.T) {
	e := open(t)
	if err := e.Preload("window-2k"); err != nil {
		t.Fatal(err)
	}
	st, _ := e.Status()
	if len(st["srs_resident"].([]any)) != 1 {
		t.Fatalf("preload did not make the SRS resident: %v", st["srs_resident"])
	}
	sum, err := e.Summary()
	if err != nil || sum.SRSResident != 1 || sum.SRSResidentBytes == 0 || sum.Backend != st["backend"] ||
		sum.BudgetUsed < sum.SRSResidentBytes || sum.PoolFree != sum.PoolBuffers || sum.Closed {
		t.Fatalf("summary after preload: %+v %v", sum, err)
	}
	if evicted, err := e.Evict("window-2k"); !evicted || err != nil {
		t.Fatalf("evict: %v %v", evicted, err)
	}
	if sum, _ := e.Summary(); sum.SRSResident != 0 || sum.SRSResidentBytes != 0 {
		t.Fatalf("summary after evict: %+v", sum)
	}
	if err := e.Preload("nonsense-2k"); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("unknown kind: %v", err)
	}
	if devices, err := cuzk.GPUDevices(); err != nil || devices == nil || len(devices) != 0 {
		t.Fatalf("CPU build lists no GPUs: %v %v", devices, err)
	}
}

func TestDefaultEngineIsSharedAndNotClosable(t *testing.T) {
	a, err := cuzk.Default()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cuzk.Default()
	if a != b {
		t.Fatal("Default returned two engines")
	}
	if err := a.Close(); !errors.Is(err, cuzk.ErrInvalidInput) {
		t.Fatalf("closing the default engine: %v", err)
	}
	if _, err := a.Summary(); err != nil {
		t.Fatalf("default engine after Close: %v", err)
	}
}

// TestSixtyFourGoroutinesMixKindsCancelAndClose: 64 goroutines submit every kind at once,
// a quarter of the jobs are cancelled by other goroutines and a quarter abandoned through
// their context; then the engine's counters must account for every job and nothing may be
// left in flight. Then 64 goroutines submit in loops while one closes the engine: each must
// end with ErrClosed, and nothing else may go wrong. No goroutine but the test's calls t.Fatal.
func TestSixtyFourGoroutinesMixKindsCancelAndClose(t *testing.T) {
	d := testdata.Load(t)
	e := open(t)
	w, win, s, p := d.Winning, d.Window, d.Snap, d.Porep[0]
	rndW, rndWin := testdata.Hex(t, w.Randomness), testdata.Hex(t, win.Randomness)
	vanW, vanWin, vanS := d.Files(t, w.VanillaFiles), d.Files(t, win.VanillaFiles), d.Files(t, s.VanillaFiles)
	old, newR, newD := testdata.Hex(t, s.CommROld), testdata.Hex(t, s.CommRNew), testdata.Hex(t, s.CommDNew)
	c1 := d.File(t, p.C1File)
	submit := func(kind int) (cuzk.JobID, error) {
		switch kind {
		case 0:
			return e.SubmitWinningPoSt(w.Registered, rndW, d.MinerID, vanW)
		case 1:
			return e.SubmitWindowPoSt(win.Registered, rndWin, d.MinerID, vanWin, win.Partition)
		case 2:
			return e.SubmitPoRep(c1, p.Registered, p.Sector, d.MinerID)
		default:
			return e.SubmitSnapDeals(s.Registered, vanS, old, newR, newD)
		}
	}

	type outcome struct {
		kind int
		err  error
	}
	results := make(chan outcome, 64)
	toCancel := make(chan cuzk.JobID, 64)
	var cancellers sync.WaitGroup
	for c := 0; c < 4; c++ { // goroutines that only cancel what others submitted
		cancellers.Add(1)
		go func() {
			defer cancellers.Done()
			for id := range toCancel {
				if err := e.Cancel(id); err != nil && !errors.Is(err, cuzk.ErrUnknownJob) {
					results <- outcome{-1, fmt.Errorf("cancel %d: %w", id, err)}
				}
			}
		}()
	}
	var submitters sync.WaitGroup
	for i := 0; i < 64; i++ {
		submitters.Add(1)
		go func(kind int) {
			defer submitters.Done()
			id, err := submit(kind)
			if err != nil {
				results <- outcome{kind, fmt.Errorf("submit kind %d: %w", kind, err)}
				return
			}
			ctx := context.Background()
			switch kind {
			case 2: // PoRep: cancelled by a canceller
				toCancel <- id
			case 3: // SnapDeals: abandoned through its context
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
				defer cancel()
			}
			proof, err := e.Await(ctx, id)
			if err == nil && len(proof) != 192 {
				err = fmt.Errorf("kind %d: %d proof bytes", kind, len(proof))
			}
			results <- outcome{kind, err}
		}(i % 4)
	}
	submitters.Wait()
	close(toCancel)
	cancellers.Wait()
	close(results)
	var proved, cancelled uint64
	for r := range results {
		switch {
		case r.err == nil:
			proved++
		case (r.kind == 2 || r.kind == 3) && errors.Is(r.err, cuzk.ErrCancelled):
			cancelled++
		default:
			t.Errorf("kind %d: %v", r.kind, r.err)
		}
	}
	if proved < 32 {
		t.Errorf("%d jobs proved, want at least the 32 PoSt jobs", proved)
	}
	sum := waitIdle(t, e)
	if sum.JobsCompleted != proved || sum.JobsCancelled != cancelled || sum.JobsFailed != 0 {
		t.Errorf("counters %+v; the goroutines saw %d proofs and %d cancellations", sum, proved, cancelled)
	}
	if sum.PartitionsQueued != 0 || sum.PartitionsSynthesized != 0 || sum.PartitionsInFlight != 0 || sum.PoolFree != sum.PoolBuffers {
		t.Errorf("work left after every job ended: %+v", sum)
	}

	// Submit loops racing one Close.
	var loops sync.WaitGroup
	ends := make(chan error, 64)
	var submitted atomic.Int64
	enough, loopsDone := make(chan struct{}), make(chan struct{})
	closed := make(chan error, 1)
	for i := 0; i < 64; i++ {
		loops.Add(1)
		go func(kind int) {
			defer loops.Done()
			for {
				id, err := submit(kind)
				if err == nil {
					if submitted.Add(1) == 64 {
						close(enough)
					}
					err = e.Release(id)
				}
				if err != nil {
					ends <- err
					return
				}
			}
		}(i % 4)
	}
	go func() {
		select {
		case <-enough:
		case <-loopsDone: // every loop already failed: Close anyway, the errors say why
		}
		closed <- e.Close()
	}()
	loops.Wait()
	close(loopsDone)
	close(ends)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	for err := range ends {
		if !errors.Is(err, cuzk.ErrClosed) {
			t.Errorf("a submit loop ended with %v, want ErrClosed", err)
		}
	}
	if _, err := e.Summary(); !errors.Is(err, cuzk.ErrClosed) {
		t.Errorf("Summary after Close: %v", err)
	}
}

func TestContextCancellationCancelsTheJob(t *testing.T) {
	d := testdata.Load(t)
	e := open(t)
	p := d.Porep[0]
	id, err := e.SubmitPoRep(d.File(t, p.C1File), p.Registered, p.Sector, d.MinerID)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.Await(ctx, id)
	if !errors.Is(err, cuzk.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("expected cancellation, got %v", err)
	}
	// The engine keeps serving.
	if _, err := e.Await(context.Background(), submitWindow(t, e, d)); err != nil {
		t.Fatal(err)
	}
}

func TestCloseWithWorkInFlight(t *testing.T) {
	d := testdata.Load(t)
	e, err := cuzk.Open(cuzk.Config{TOML: "synthesis_workers = 1"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []cuzk.JobID
	for i := 0; i < 4; i++ {
		ids = append(ids, submitWindow(t, e, d))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Await(context.Background(), ids[0]); !errors.Is(err, cuzk.ErrClosed) {
		t.Fatalf("await after close: %v", err)
	}
	if _, err := e.SubmitPoRep([]byte("{}"), 5, 1, 1); !errors.Is(err, cuzk.ErrClosed) {
		t.Fatalf("submit after close: %v", err)
	}
	if err := e.Close(); !errors.Is(err, cuzk.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
}

// Close racing Status, Await and Submit from other goroutines: it returns without waiting for
// them, every racing call ends with ErrClosed (or a finished result), and the closed handle is
// refused by the library itself, not by the Go wrapper.
func TestCloseRacesEveryCall(t *testing.T) {
	d := testdata.Load(t)
	e, err := cuzk.Open(cuzk.Config{TOML: "synthesis_workers = 1"})
	if err != nil {
		t.Fatal(err)
	}
	id := submitWindow(t, e, d)
	w := d.Window
	rnd, vanilla := testdata.Hex(t, w.Randomness), d.Files(t, w.VanillaFiles)
	var statusCalls sync.WaitGroup
	statusCalls.Add(2)
	ended := make(chan error, 4)
	for i := 0; i < 2; i++ {
		go func() {
			for n := 0; ; n++ {
				if n == 50 {
					statusCalls.Done()
				}
				if _, err := e.Status(); err != nil {
					if n < 50 {
						statusCalls.Done()
					}
					ended <- err
					return
				}
			}
		}()
	}
	go func() {
		_, err := e.Await(context.Background(), id)
		if err == nil {
			err = cuzk.ErrClosed // finished before the close: nothing left to race
		}
		ended <- err
	}()
	go func() {
		for {
			job, err := e.SubmitWindowPoSt(w.Registered, rnd, d.MinerID, vanilla, w.Partition)
			if err != nil {
				ended <- err
				return
			}
			_ = e.Release(job)
		}
	}()
	statusCalls.Wait()
	if err := e.Close(); err != nil {
		t.Fatalf("close under load: %v", err)
	}
	for i := 0; i < 4; i++ {
		if err := <-ended; !errors.Is(err, cuzk.ErrClosed) {
			t.Errorf("a call racing Close ended with %v", err)
		}
	}
	_, err = e.Status()
	var ce *cuzk.Error
	if !errors.As(err, &ce) || ce.Code != cuzk.CodeClosed || !strings.Contains(ce.Message, "handle is closed") {
		t.Fatalf("status after close: %v (want the library's closed-handle error)", err)
	}
}

func TestBadInputsAreErrors(t *testing.T) {
	d := testdata.Load(t)
	e := open(t)
	p := d.Porep[0]
	c1 := d.File(t, p.C1File)
	w := d.Window
	rnd := testdata.Hex(t, w.Randomness)
	vanilla := d.Files(t, w.VanillaFiles)
	cases := map[string]func() error{
		"nil C1": func() error { _, err := e.SubmitPoRep(nil, 5, 1, d.MinerID); return err },
		"truncated C1": func() error {
			_, err := e.SubmitPoRep(c1[:len(c1)/2], 5, 1, d.MinerID)
			return err
		},
		"C1 of another miner": func() error {
			_, err := e.SubmitPoRep(c1, p.Registered, p.Sector, d.MinerID+1)
			return err
		},
		"C1 of another sector number": func() error {
			_, err := e.SubmitPoRep(c1, p.Registered, p.Sector+1, d.MinerID)
			return err
		},
		"C1 for another sector size (32 GiB V1_1)": func() error {
			_, err := e.SubmitPoRep(c1, 8, p.Sector, d.MinerID)
			return err
		},
		"NI-PoRep type for an interactive C1": func() error {
			_, err := e.SubmitPoRep(c1, 15, p.Sector, d.MinerID)
			return err
		},
		"garbage vanilla proofs": func() error {
			_, err := e.SubmitWindowPoSt(w.Registered, rnd, d.MinerID, [][]byte{[]byte("not a vanilla proof"), vanilla[1]}, 0)
			return err
		},
		"vanilla proof claiming 2^60 entries": func() error {
			claim := []byte{0, 0, 0, 0, 0, 0, 0, 0x10}
			_, err := e.SubmitWinningPoSt(0, rnd, d.MinerID, [][]byte{claim})
			return err
		},
		"wrong proof type": func() error {
			_, err := e.SubmitWindowPoSt(77, rnd, d.MinerID, vanilla, 0)
			return err
		},
		"winning type for window": func() error {
			_, err := e.SubmitWindowPoSt(0, rnd, d.MinerID, vanilla, 0)
			return err
		},
		"33-byte randomness": func() error {
			_, err := e.SubmitWindowPoSt(w.Registered, append(rnd, 0), d.MinerID, vanilla, 0)
			return err
		},
		"empty vanilla": func() error {
			_, err := e.SubmitWindowPoSt(w.Registered, rnd, d.MinerID, nil, 0)
			return err
		},
		"partition index past the deadline limit": func() error {
			_, err := e.SubmitWindowPoSt(w.Registered, rnd, d.MinerID, vanilla, 3000)
			return err
		},
		"all-partitions index for one job": func() error {
			_, err := e.SubmitWindowPoSt(w.Registered, rnd, d.MinerID, vanilla, ^uint64(0))
			return err
		},
		"whole WindowPoSt with winning type": func() error {
			_, err := e.ProveWindowPoStAll(0, rnd, d.MinerID, vanilla)
			return err
		},
		"short commitment": func() error {
			s := d.Snap
			_, err := e.SubmitSnapDeals(s.Registered, d.Files(t, s.VanillaFiles), []byte{1, 2}, testdata.Hex(t, s.CommRNew), testdata.Hex(t, s.CommDNew))
			return err
		},
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, cuzk.ErrInvalidInput) {
			t.Errorf("%s: expected ErrInvalidInput, got %v", name, err)
		}
	}
	if _, err := e.Await(context.Background(), 424242); !errors.Is(err, cuzk.ErrUnknownJob) {
		t.Errorf("unknown job: %v", err)
	}
	if _, err := e.Await(context.Background(), submitWindow(t, e, d)); err != nil {
		t.Fatalf("engine stopped serving: %v", err)
	}
}

// waitIdle polls Summary every 10ms (at most 60s) until no job is active and no job record is
// held, and returns the last summary.
func waitIdle(t *testing.T, e *cuzk.Engine) cuzk.Summary {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sum, err := e.Summary()
		if err != nil {
			t.Fatal(err)
		}
		if sum.JobsActive == 0 && sum.JobsHeld == 0 {
			return sum
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still held after 60s: %+v", sum)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAbandonedAwaitReleasesTheJob(t *testing.T) {
	d := testdata.Load(t)
	e := open(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	p := d.Porep[0]
	var ids []cuzk.JobID
	for i := 0; i < 4; i++ {
		id, err := e.SubmitPoRep(d.File(t, p.C1File), p.Registered, p.Sector, d.MinerID)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, submitWindow(t, e, d), id)
	}
	for i, id := range ids {
		if i%2 == 0 {
			// Abandoned before waiting at all.
			if _, err := e.Await(cancelled, id); !errors.Is(err, cuzk.ErrCancelled) || !errors.Is(err, context.Canceled) {
				t.Fatalf("job %d with a cancelled context: %v", id, err)
			}
			continue
		}
		// Abandoned while waiting (or finished within the first wait: then it was awaited).
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		_, err := e.Await(ctx, id)
		cancel()
		if err != nil && (!errors.Is(err, cuzk.ErrCancelled) || !errors.Is(err, context.DeadlineExceeded)) {
			t.Fatalf("job %d with a short context: %v", id, err)
		}
	}
	sum := waitIdle(t, e)
	if sum.JobsActive != 0 || sum.JobsHeld != 0 || sum.PartitionsInFlight != 0 || sum.PoolFree != sum.PoolBuffers {
		t.Fatalf("abandoned jobs left something behind: %+v", sum)
	}
	for _, id := range ids {
		if err := e.Release(id); !errors.Is(err, cuzk.ErrUnknownJob) {
			t.Fatalf("release of abandoned job %d: %v", id, err)
		}
	}
	// The engine keeps serving.
	if _, err := e.Await(context.Background(), submitWindow(t, e, d)); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, e)
}

func TestReleaseOfAnAwaitedJobIsUnknown(t *testing.T) {
	d := testdata.Load(t)
	e := open(t)
	id := submitWindow(t, e, d)
	if _, err := e.Await(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if err := e.Release(id); !errors.Is(err, cuzk.ErrUnknownJob) {
		t.Fatalf("release of an awaited job: %v", err)
	}
	if err := e.Release(424242); !errors.Is(err, cuzk.ErrUnknownJob) {
		t.Fatalf("release of a job never submitted: %v", err)
	}
	// A job released instead of awaited: gone once nothing of it is in flight.
	id = submitWindow(t, e, d)
	if err := e.Release(id); err != nil {
		t.Fatalf("release of a queued job: %v", err)
	}
	waitIdle(t, e)
	if _, err := e.Await(context.Background(), id); !errors.Is(err, cuzk.ErrUnknownJob) {
		t.Fatalf("await of a released job: %v", err)
	}
}
