package cuzk

import "context"

// Request is any proof request: PoRepRequest, WinningPoStRequest, WindowPoStRequest or
// SnapDealsRequest.
type Request interface {
	submit(e *Engine) (JobID, error)
}

// PoRepRequest is a PoRep C2 request (Registered: abi.RegisteredSealProof or RegisteredFromC1).
type PoRepRequest struct {
	C1Output   []byte
	Registered uint64
	Sector     uint64
	Miner      uint64
}

// WinningPoStRequest is a WinningPoSt request from vanilla proofs.
type WinningPoStRequest struct {
	Registered uint64
	Randomness []byte
	Miner      uint64
	Vanilla    [][]byte
}

// WindowPoStRequest is one WindowPoSt partition from vanilla proofs.
type WindowPoStRequest struct {
	Registered uint64
	Randomness []byte
	Miner      uint64
	Vanilla    [][]byte
	Partition  uint64
}

// SnapDealsRequest is a SnapDeals update proof from per-partition vanilla proofs.
type SnapDealsRequest struct {
	Registered                   uint64
	Vanilla                      [][]byte
	CommROld, CommRNew, CommDNew []byte
}

func (r PoRepRequest) submit(e *Engine) (JobID, error) {
	return e.SubmitPoRep(r.C1Output, r.Registered, r.Sector, r.Miner)
}

func (r WinningPoStRequest) submit(e *Engine) (JobID, error) {
	return e.SubmitWinningPoSt(r.Registered, r.Randomness, r.Miner, r.Vanilla)
}

func (r WindowPoStRequest) submit(e *Engine) (JobID, error) {
	return e.SubmitWindowPoSt(r.Registered, r.Randomness, r.Miner, r.Vanilla, r.Partition)
}

func (r SnapDealsRequest) submit(e *Engine) (JobID, error) {
	return e.SubmitSnapDeals(r.Registered, r.Vanilla, r.CommROld, r.CommRNew, r.CommDNew)
}

// Submit queues any request. The context only bounds the submission itself (it is checked
// before submitting); pass a context to Await to bound the wait.
func (e *Engine) Submit(ctx context.Context, req Request) (JobID, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return req.submit(e)
}

// Prove submits a request and waits for its proof; cancelling ctx cancels the job.
func (e *Engine) Prove(ctx context.Context, req Request) ([]byte, error) {
	id, err := e.Submit(ctx, req)
	if err != nil {
		return nil, err
	}
	return e.Await(ctx, id)
}
