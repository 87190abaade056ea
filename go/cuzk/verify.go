package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import "unsafe"

// Sector is a challenged sector for PoSt verification.
type Sector struct {
	Number uint64
	CommR  []byte
}

// cSlice copies b into C memory; free the result's ptr with C.free.
func cSlice(b []byte) C.CuzkSlice {
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
	s := []C.CuzkSlice{cSlice(commR), cSlice(commD), cSlice(ticket), cSlice(seed), cSlice(proof)}
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
		arr[i] = C.CuzkSectorInfo{sector_number: C.uint64_t(s.Number), comm_r: cSlice(s.CommR)}
	}
	return &arr[0], C.size_t(len(sectors)), func() {
		for _, s := range arr {
			C.free(unsafe.Pointer(s.comm_r.ptr))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}

type postVerifier func(C.uint64_t, C.CuzkSlice, C.uint64_t, *C.CuzkSectorInfo, C.size_t, C.CuzkSlice, *C.bool, **C.char) C.CuzkCode

func verifyPoSt(f postVerifier, registered uint64, randomness []byte, miner uint64, sectors []Sector, proof []byte) (bool, error) {
	r, p := cSlice(randomness), cSlice(proof)
	defer freeSlices(r, p)
	arr, n, free := cSectors(sectors)
	defer free()
	var valid C.bool
	var msg *C.char
	code := f(C.uint64_t(registered), r, C.uint64_t(miner), arr, n, p, &valid, &msg)
	return verdict(code, msg, valid)
}

// VerifyWinningPoSt checks a WinningPoSt proof.
func VerifyWinningPoSt(registered uint64, randomness []byte, miner uint64, sectors []Sector, proof []byte) (bool, error) {
	return verifyPoSt(func(a C.uint64_t, b C.CuzkSlice, c C.uint64_t, d *C.CuzkSectorInfo, e C.size_t, f C.CuzkSlice, g *C.bool, h **C.char) C.CuzkCode {
		return C.cuzk_verify_winning_post(a, b, c, d, e, f, g, h)
	}, registered, randomness, miner, sectors, proof)
}

// VerifyWindowPoSt checks a WindowPoSt proof (partition proofs concatenated).
func VerifyWindowPoSt(registered uint64, randomness []byte, miner uint64, sectors []Sector, proof []byte) (bool, error) {
	return verifyPoSt(func(a C.uint64_t, b C.CuzkSlice, c C.uint64_t, d *C.CuzkSectorInfo, e C.size_t, f C.CuzkSlice, g *C.bool, h **C.char) C.CuzkCode {
		return C.cuzk_verify_window_post(a, b, c, d, e, f, g, h)
	}, registered, randomness, miner, sectors, proof)
}

// VerifyUpdate checks a SnapDeals update proof.
func VerifyUpdate(registered uint64, commROld, commRNew, commDNew, proof []byte) (bool, error) {
	s := []C.CuzkSlice{cSlice(commROld), cSlice(commRNew), cSlice(commDNew), cSlice(proof)}
	defer freeSlices(s...)
	var valid C.bool
	var msg *C.char
	code := C.cuzk_verify_update(C.uint64_t(registered), s[0], s[1], s[2], s[3], &valid, &msg)
	return verdict(code, msg, valid)
}
