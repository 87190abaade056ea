package cuzk

/*
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import (
	"unsafe"
)

// These functions read sector files through filecoin-proofs (challenges, vanilla proofs);
// they need no engine. The SNARKs over vanilla proofs are proved by an Engine.

// cU64s copies u64s into C memory; free with C.free.
func cU64s(v []uint64) (*C.uint64_t, C.size_t) {
	if len(v) == 0 {
		return nil, 0
	}
	p := (*C.uint64_t)(C.malloc(C.size_t(len(v)) * 8))
	copy(unsafe.Slice((*uint64)(unsafe.Pointer(p)), len(v)), v)
	return p, C.size_t(len(v))
}

// cSlice copies b into C memory as a CuzkSlice; call the returned func to free.
func cSlice(b []byte) (C.CuzkSlice, func()) {
	p, n := cBytes(b)
	return C.CuzkSlice{ptr: p, len: n}, func() { C.free(unsafe.Pointer(p)) }
}

// goU64s copies a cuzk u64 list into Go memory and frees it.
func goU64s(l *C.CuzkU64s) []uint64 {
	defer C.cuzk_u64s_free(l)
	if l.len == 0 {
		return []uint64{}
	}
	out := make([]uint64, int(l.len))
	copy(out, unsafe.Slice((*uint64)(unsafe.Pointer(l.ptr)), int(l.len)))
	return out
}

// WinningPoStSectorChallenge returns the indices (into the sorted eligible sectors,
// 0..eligibleSectors) a WinningPoSt challenges (filecoin-ffi's
// GenerateWinningPoStSectorChallenge). registered is the abi.RegisteredPoStProof number.
func WinningPoStSectorChallenge(registered uint64, randomness []byte, miner uint64, eligibleSectors uint64) ([]uint64, error) {
	r, free := cSlice(randomness)
	defer free()
	var out C.CuzkU64s
	var msg *C.char
	code := C.cuzk_winning_post_sector_challenge(C.uint64_t(registered), r, C.uint64_t(miner), C.uint64_t(eligibleSectors), &out, &msg)
	if err := takeError(code, msg); err != nil {
		return nil, err
	}
	return goU64s(&out), nil
}

// SectorChallenges are per-sector PoSt leaf challenges: Challenges[i] belong to Sectors[i]
// (ascending, each sector once).
type SectorChallenges struct {
	Sectors    []uint64
	Challenges [][]uint64
}

// FallbackSectorChallenges returns the leaf challenges of each sector of a WinningPoSt or
// WindowPoSt (filecoin-ffi's GeneratePoStFallbackSectorChallenges). A sector's challenges
// depend on its position in sectors: pass them in proving order (ascending).
func FallbackSectorChallenges(registered uint64, randomness []byte, miner uint64, sectors []uint64) (*SectorChallenges, error) {
	r, free := cSlice(randomness)
	defer free()
	ids, n := cU64s(sectors)
	defer C.free(unsafe.Pointer(ids))
	var out C.CuzkSectorChallenges
	var msg *C.char
	code := C.cuzk_fallback_sector_challenges(C.uint64_t(registered), r, C.uint64_t(miner), ids, n, &out, &msg)
	if err := takeError(code, msg); err != nil {
		return nil, err
	}
	defer C.cuzk_sector_challenges_free(&out)
	per := int(out.per_sector)
	got := &SectorChallenges{
		Sectors:    make([]uint64, int(out.sectors.len)),
		Challenges: make([][]uint64, int(out.sectors.len)),
	}
	if out.sectors.len > 0 {
		copy(got.Sectors, unsafe.Slice((*uint64)(unsafe.Pointer(out.sectors.ptr)), int(out.sectors.len)))
	}
	var flat []uint64
	if out.challenges.len > 0 {
		flat = unsafe.Slice((*uint64)(unsafe.Pointer(out.challenges.ptr)), int(out.challenges.len))
	}
	if per*len(got.Sectors) != len(flat) {
		return nil, &Error{Code: CodeProofFailed, Message: "challenge list does not match its sectors"}
	}
	for i := range got.Challenges {
		got.Challenges[i] = append([]uint64(nil), flat[i*per:(i+1)*per]...)
	}
	return got, nil
}

// Replica names a sealed sector's files for vanilla proving.
type Replica struct {
	Registered  uint64 // abi.RegisteredPoStProof number
	Sector      uint64
	CommR       []byte // 32 bytes
	CacheDir    string
	ReplicaPath string
}

// SingleVanillaProof reads one sector's PoSt vanilla proof for challenges from its replica
// and cache (filecoin-ffi's GenerateSingleVanillaProof). A sector whose files are missing,
// unreadable or inconsistent with CommR fails with ErrProofFailed.
func SingleVanillaProof(replica Replica, challenges []uint64) ([]byte, error) {
	commR, f1 := cSlice(replica.CommR)
	defer f1()
	cache, f2 := cSlice([]byte(replica.CacheDir))
	defer f2()
	path, f3 := cSlice([]byte(replica.ReplicaPath))
	defer f3()
	ch, n := cU64s(challenges)
	defer C.free(unsafe.Pointer(ch))
	var out C.CuzkBytes
	var msg *C.char
	code := C.cuzk_single_vanilla_proof(C.uint64_t(replica.Registered), C.uint64_t(replica.Sector), commR, cache, path, ch, n, &out, &msg)
	if err := takeError(code, msg); err != nil {
		return nil, err
	}
	defer C.cuzk_bytes_free(&out)
	return C.GoBytes(unsafe.Pointer(out.ptr), C.int(out.len)), nil
}

// UpdatePaths are a SnapDeals update's files.
type UpdatePaths struct {
	NewReplica, NewReplicaCache, SectorKey, SectorKeyCache string
}

// UpdateVanillaProofs reads a SnapDeals update's vanilla proofs, one per partition
// (filecoin-ffi's GenerateUpdateVanillaProofs). registered is the abi.RegisteredUpdateProof
// number; the commitments are 32 bytes each.
func UpdateVanillaProofs(registered uint64, commROld, commRNew, commDNew []byte, paths UpdatePaths) ([][]byte, error) {
	var args [7]C.CuzkSlice
	for i, b := range [][]byte{commROld, commRNew, commDNew, []byte(paths.NewReplica), []byte(paths.NewReplicaCache), []byte(paths.SectorKey), []byte(paths.SectorKeyCache)} {
		s, free := cSlice(b)
		defer free()
		args[i] = s
	}
	var out C.CuzkBytesList
	var msg *C.char
	code := C.cuzk_update_vanilla_proofs(C.uint64_t(registered), args[0], args[1], args[2], args[3], args[4], args[5], args[6], &out, &msg)
	if err := takeError(code, msg); err != nil {
		return nil, err
	}
	defer C.cuzk_bytes_list_free(&out)
	proofs := make([][]byte, int(out.len))
	if out.len > 0 {
		items := unsafe.Slice(out.ptr, int(out.len))
		for i, b := range items {
			proofs[i] = C.GoBytes(unsafe.Pointer(b.ptr), C.int(b.len))
		}
	}
	return proofs, nil
}

// NumPartitionsForFallbackPoSt is the number of partitions of a WindowPoSt over numSectors
// sectors (filecoin-ffi's GetNumPartitionForFallbackPost).
func NumPartitionsForFallbackPoSt(registered uint64, numSectors uint64) (uint64, error) {
	var out C.uint64_t
	var msg *C.char
	if err := takeError(C.cuzk_num_partitions_for_fallback_post(C.uint64_t(registered), C.uint64_t(numSectors), &out, &msg), msg); err != nil {
		return 0, err
	}
	return uint64(out), nil
}

func version(f func(out **C.char, msg **C.char) C.CuzkCode) (string, error) {
	var out, msg *C.char
	if err := takeError(f(&out, &msg), msg); err != nil {
		return "", err
	}
	defer C.cuzk_string_free(out)
	return C.GoString(out), nil
}

// SealVersion is the proofs-api name of an abi.RegisteredSealProof (filecoin-ffi's
// GetSealVersion).
func SealVersion(registered uint64) (string, error) {
	return version(func(out, msg **C.char) C.CuzkCode {
		return C.cuzk_seal_version(C.uint64_t(registered), out, msg)
	})
}

// PoStVersion is the proofs-api name of an abi.RegisteredPoStProof (filecoin-ffi's
// GetPoStVersion).
func PoStVersion(registered uint64) (string, error) {
	return version(func(out, msg **C.char) C.CuzkCode {
		return C.cuzk_post_version(C.uint64_t(registered), out, msg)
	})
}
