package cuzk_test

import (
	"context"
	"errors"
	"strings"
	"sync"
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

func TestSixtyFourGoroutines(t *testing.T) {
	d := testdata.Load(t)
	e := open(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			proof, err := e.Await(context.Background(), submitWindow(t, e, d))
			if err == nil && len(proof) != 192 {
				err = errors.New("bad proof length")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
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
