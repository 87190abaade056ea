package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import "unsafe"

// AggregationInput is one aggregated sector's public values (filecoin-ffi's
// AggregationInputs): its number, comm_r, comm_d, ticket and seed (32 bytes each).
type AggregationInput struct {
	Sector       uint64
	CommR, CommD []byte
	Ticket, Seed []byte
}

// AggregateSealProofs aggregates the seal proofs of several sectors (each the circuit proofs
// of one C2, e.g. from ProvePoRepCircuitProofs) with their comm_r and seed, in the same order,
// into one SnarkPack proof. registered is the abi.RegisteredSealProof, aggregation the
// abi.RegisteredAggregationProof (0 SnarkPackV1, 1 SnarkPackV2).
func AggregateSealProofs(registered, aggregation uint64, commRs, seeds, proofs [][]byte) ([]byte, error) {
	if len(commRs) != len(proofs) || len(seeds) != len(proofs) {
		return nil, &Error{Code: CodeInvalidInput, Message: "one comm_r and one seed per proof"}
	}
	c, n, freeC := cSlices(commRs)
	defer freeC()
	s, _, freeS := cSlices(seeds)
	defer freeS()
	p, _, freeP := cSlices(proofs)
	defer freeP()
	var out C.CuzkBytes
	var msg *C.char
	code := C.cuzk_aggregate_seal_proofs(C.uint64_t(registered), C.uint64_t(aggregation), c, s, p, n, &out, &msg)
	if err := takeError(code, msg); err != nil {
		return nil, err
	}
	defer C.cuzk_bytes_free(&out)
	return C.GoBytes(unsafe.Pointer(out.ptr), C.int(out.len)), nil
}

// VerifyAggregateSeals checks a SnarkPack aggregate of seal proofs over its sectors' public
// values, as filecoin-ffi's VerifyAggregateSeals.
func VerifyAggregateSeals(registered, aggregation, miner uint64, proof []byte, inputs []AggregationInput) (bool, error) {
	p := cCopy(proof)
	defer freeSlices(p)
	var arr *C.CuzkAggregationInput
	if len(inputs) > 0 {
		items := (*[1 << 24]C.CuzkAggregationInput)(C.malloc(C.size_t(len(inputs)) * C.size_t(unsafe.Sizeof(C.CuzkAggregationInput{}))))[:len(inputs):len(inputs)]
		for i, in := range inputs {
			items[i] = C.CuzkAggregationInput{
				sector_number: C.uint64_t(in.Sector),
				comm_r:        cCopy(in.CommR),
				comm_d:        cCopy(in.CommD),
				ticket:        cCopy(in.Ticket),
				seed:          cCopy(in.Seed),
			}
		}
		defer func() {
			for _, in := range items {
				freeSlices(in.comm_r, in.comm_d, in.ticket, in.seed)
			}
			C.free(unsafe.Pointer(&items[0]))
		}()
		arr = &items[0]
	}
	var valid C.bool
	var msg *C.char
	code := C.cuzk_verify_aggregate_seal_proofs(C.uint64_t(registered), C.uint64_t(aggregation), C.uint64_t(miner), p, arr, C.size_t(len(inputs)), &valid, &msg)
	return verdict(code, msg, valid)
}
