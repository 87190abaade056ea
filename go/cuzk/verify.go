package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import "unsafe"

// Sector is a challenged sector for PoSt verification: the abi.RegisteredPoStProof it is
// checked with, its number and its replica commitment.
type Sector struct {
	Registered uint64
	Number     uint64
	CommR      []byte
}

// PoStProof is a PoSt proof with its abi.RegisteredPoStProof, as go-state-types' proof.PoStProof.
type PoStProof struct {
	Registered uint64
	Bytes      []byte
}

// cCopy copies b into C memory; free the result's ptr with C.free.
func cCopy(b []byte) C.CuzkSlice {
	p, n := cBytes(b)
	return C.CuzkSlice{ptr: p, len: n}
}

func freeSlices(s ...C.CuzkSlice) {
	for _, x := range s {
		C.free(unsafe.Pointer(x.ptr))
	}
}

// verdict turns a verify call's code, message and answer into (valid, error).
func verdict(code C.CuzkCode, msg *C.char, valid C.bool) (bool, error) {
	if err := takeError(code, msg); err != nil {
		return false, err
	}
	return bool(valid), nil
}

// VerifySeal checks a PoRep proof with filecoin-proofs' verifier.
func VerifySeal(registered uint64, commR, commD []byte, miner, sector uint64, ticket, seed, proof []byte) (bool, error) {
	s := []C.CuzkSlice{cCopy(commR), cCopy(commD), cCopy(ticket), cCopy(seed), cCopy(proof)}
	defer freeSlices(s...)
	var valid C.bool
	var msg *C.char
	code := C.cuzk_verify_seal(C.uint64_t(registered), s[0], s[1], C.uint64_t(miner), C.uint64_t(sector), s[2], s[3], s[4], &valid, &msg)
	return verdict(code, msg, valid)
}

// cSectors copies sectors into a C array; call the returned func to free.
func cSectors(sectors []Sector) (*C.CuzkSectorInfo, C.size_t, func()) {
	if len(sectors) == 0 {
		return nil, 0, func() {}
	}
	arr := (*[1 << 24]C.CuzkSectorInfo)(C.malloc(C.size_t(len(sectors)) * C.size_t(unsafe.Sizeof(C.CuzkSectorInfo{}))))[:len(sectors):len(sectors)]
	for i, s := range sectors {
		arr[i] = C.CuzkSectorInfo{registered_proof: C.uint64_t(s.Registered), sector_number: C.uint64_t(s.Number), comm_r: cCopy(s.CommR)}
	}
	return &arr[0], C.size_t(len(sectors)), func() {
		for _, s := range arr {
			C.free(unsafe.Pointer(s.comm_r.ptr))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}

// cPoStProofs copies proofs into a C array; call the returned func to free.
func cPoStProofs(proofs []PoStProof) (*C.CuzkPoStProof, C.size_t, func()) {
	if len(proofs) == 0 {
		return nil, 0, func() {}
	}
	arr := (*[1 << 24]C.CuzkPoStProof)(C.malloc(C.size_t(len(proofs)) * C.size_t(unsafe.Sizeof(C.CuzkPoStProof{}))))[:len(proofs):len(proofs)]
	for i, p := range proofs {
		arr[i] = C.CuzkPoStProof{registered_proof: C.uint64_t(p.Registered), proof: cCopy(p.Bytes)}
	}
	return &arr[0], C.size_t(len(proofs)), func() {
		for _, p := range arr {
			C.free(unsafe.Pointer(p.proof.ptr))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}

type postVerifier func(C.CuzkSlice, C.uint64_t, *C.CuzkSectorInfo, C.size_t, *C.CuzkPoStProof, C.size_t, *C.bool, **C.char) C.CuzkCode

func verifyPoSt(f postVerifier, randomness []byte, miner uint64, sectors []Sector, proofs []PoStProof) (bool, error) {
	r := cCopy(randomness)
	defer freeSlices(r)
	arr, n, free := cSectors(sectors)
	defer free()
	ps, np, freeProofs := cPoStProofs(proofs)
	defer freeProofs()
	var valid C.bool
	var msg *C.char
	code := f(r, C.uint64_t(miner), arr, n, ps, np, &valid, &msg)
	return verdict(code, msg, valid)
}

// VerifyWinningPoSt checks a WinningPoSt as filecoin-ffi does: the bytes of all proofs
// concatenated, over the challenged sectors, each with its own proof type.
func VerifyWinningPoSt(randomness []byte, miner uint64, sectors []Sector, proofs []PoStProof) (bool, error) {
	return verifyPoSt(func(a C.CuzkSlice, b C.uint64_t, c *C.CuzkSectorInfo, d C.size_t, e *C.CuzkPoStProof, f C.size_t, g *C.bool, h **C.char) C.CuzkCode {
		return C.cuzk_verify_winning_post(a, b, c, d, e, f, g, h)
	}, randomness, miner, sectors, proofs)
}

// VerifyWindowPoSt checks a WindowPoSt as filecoin-ffi does: every proof entry is handed to
// filecoin-proofs-api, which accepts exactly one (the partition proofs concatenated).
func VerifyWindowPoSt(randomness []byte, miner uint64, sectors []Sector, proofs []PoStProof) (bool, error) {
	return verifyPoSt(func(a C.CuzkSlice, b C.uint64_t, c *C.CuzkSectorInfo, d C.size_t, e *C.CuzkPoStProof, f C.size_t, g *C.bool, h **C.char) C.CuzkCode {
		return C.cuzk_verify_window_post(a, b, c, d, e, f, g, h)
	}, randomness, miner, sectors, proofs)
}

// VerifyUpdate checks a SnapDeals update proof.
func VerifyUpdate(registered uint64, commROld, commRNew, commDNew, proof []byte) (bool, error) {
	s := []C.CuzkSlice{cCopy(commROld), cCopy(commRNew), cCopy(commDNew), cCopy(proof)}
	defer freeSlices(s...)
	var valid C.bool
	var msg *C.char
	code := C.cuzk_verify_update(C.uint64_t(registered), s[0], s[1], s[2], s[3], &valid, &msg)
	return verdict(code, msg, valid)
}
