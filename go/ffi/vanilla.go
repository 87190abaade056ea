package ffi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
)

// Path-based PoSt and SnapDeals, and the challenge and vanilla-proof functions, with
// filecoin-ffi's names and signatures. Sector files are read through filecoin-proofs (as
// filecoin-ffi reads them); the SNARKs are proved by cuzk's engine through the *WithVanilla
// functions, so the proofs verify with filecoin-ffi's verifiers.

// PrivateSectorInfo is a sealed sector and where its files are, as in filecoin-ffi.
type PrivateSectorInfo struct {
	proof.SectorInfo
	CacheDirPath     string
	PoStProofType    abi.RegisteredPoStProof
	SealedSectorPath string
}

// SortedPrivateSectorInfo is a list of PrivateSectorInfo sorted by sector number, each
// sector once (build it with NewSortedPrivateSectorInfo).
type SortedPrivateSectorInfo struct {
	f []PrivateSectorInfo
}

// NewSortedPrivateSectorInfo sorts sectors by number, keeping the first of duplicates.
func NewSortedPrivateSectorInfo(sectorInfo ...PrivateSectorInfo) SortedPrivateSectorInfo {
	result := make([]PrivateSectorInfo, 0, len(sectorInfo))
	seen := map[abi.SectorNumber]struct{}{}
	for i := range sectorInfo {
		if _, found := seen[sectorInfo[i].SectorNumber]; !found {
			seen[sectorInfo[i].SectorNumber] = struct{}{}
			result = append(result, sectorInfo[i])
		}
	}
	sort.Slice(result, func(i, j int) bool {
		return result[i].SectorNumber < result[j].SectorNumber
	})
	return SortedPrivateSectorInfo{f: result}
}

// Values returns the sorted sectors.
func (s *SortedPrivateSectorInfo) Values() []PrivateSectorInfo {
	return s.f
}

// MarshalJSON encodes the sectors as a JSON array.
func (s SortedPrivateSectorInfo) MarshalJSON() ([]byte, error) {
	return json.Marshal(s.f)
}

// UnmarshalJSON decodes a JSON array of sectors. As in filecoin-ffi the order is not
// checked; the proving functions sort (and deduplicate) again.
func (s *SortedPrivateSectorInfo) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, &s.f)
}

// SplitSortedPrivateSectorInfo returns the sectors [start, end) as a new list.
func SplitSortedPrivateSectorInfo(ctx context.Context, sortPrivSectors SortedPrivateSectorInfo, start int, end int) (SortedPrivateSectorInfo, error) {
	if start < 0 || end < start || end > len(sortPrivSectors.f) {
		return SortedPrivateSectorInfo{}, fmt.Errorf("%w: split [%d, %d) of %d sectors", cuzk.ErrInvalidInput, start, end, len(sortPrivSectors.f))
	}
	out := SortedPrivateSectorInfo{f: make([]PrivateSectorInfo, 0, end-start)}
	out.f = append(out.f, sortPrivSectors.f[start:end]...)
	return out, nil
}

// FallbackChallenges are the leaf challenges of each sector of a PoSt.
type FallbackChallenges struct {
	Sectors    []abi.SectorNumber
	Challenges map[abi.SectorNumber][]uint64
}

// GenerateWinningPoStSectorChallenge returns which of eligibleSectorsLen sectors (indices
// into the sorted eligible set) a WinningPoSt challenges.
func GenerateWinningPoStSectorChallenge(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, eligibleSectorsLen uint64) ([]uint64, error) {
	return cuzk.WinningPoStSectorChallenge(uint64(proofType), asByteArray32(randomness), uint64(minerID), eligibleSectorsLen)
}

// GeneratePoStFallbackSectorChallenges returns the leaf challenges of each sector. A
// sector's challenges depend on its position in sectorIds: pass them in ascending order, as
// the path-based provers do.
func GeneratePoStFallbackSectorChallenges(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, sectorIds []abi.SectorNumber) (*FallbackChallenges, error) {
	ids := make([]uint64, len(sectorIds))
	for i, s := range sectorIds {
		ids[i] = uint64(s)
	}
	c, err := cuzk.FallbackSectorChallenges(uint64(proofType), asByteArray32(randomness), uint64(minerID), ids)
	if err != nil {
		return nil, err
	}
	out := &FallbackChallenges{
		Sectors:    make([]abi.SectorNumber, len(c.Sectors)),
		Challenges: make(map[abi.SectorNumber][]uint64, len(c.Sectors)),
	}
	for i, s := range c.Sectors {
		out.Sectors[i] = abi.SectorNumber(s)
		out.Challenges[abi.SectorNumber(s)] = c.Challenges[i]
	}
	return out, nil
}

func toReplica(r PrivateSectorInfo) (cuzk.Replica, error) {
	commR, err := CIDToReplicaCommitment(r.SealedCID)
	if err != nil {
		return cuzk.Replica{}, err
	}
	return cuzk.Replica{
		Registered:  uint64(r.PoStProofType),
		Sector:      uint64(r.SectorNumber),
		CommR:       commR,
		CacheDir:    r.CacheDirPath,
		ReplicaPath: r.SealedSectorPath,
	}, nil
}

// GenerateSingleVanillaProof reads one sector's PoSt vanilla proof for challenges from its
// sealed replica and cache.
func GenerateSingleVanillaProof(replica PrivateSectorInfo, challenges []uint64) ([]byte, error) {
	r, err := toReplica(replica)
	if err != nil {
		return nil, err
	}
	return cuzk.SingleVanillaProof(r, challenges)
}

// postSectors orders the sectors as filecoin-ffi does (a map keyed by sector number: sorted,
// the last of duplicates kept), checks they share one PoSt type, and converts them.
func postSectors(sectors []PrivateSectorInfo) (abi.RegisteredPoStProof, []cuzk.Replica, error) {
	if len(sectors) == 0 {
		return 0, nil, fmt.Errorf("%w: no replicas supplied", cuzk.ErrInvalidInput)
	}
	sorted := append([]PrivateSectorInfo(nil), sectors...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].SectorNumber < sorted[j].SectorNumber })
	unique := sorted[:0]
	for _, s := range sorted {
		if n := len(unique); n > 0 && unique[n-1].SectorNumber == s.SectorNumber {
			unique[n-1] = s
			continue
		}
		unique = append(unique, s)
	}
	proofType := unique[0].PoStProofType
	replicas := make([]cuzk.Replica, len(unique))
	for i, s := range unique {
		if s.PoStProofType != proofType {
			return 0, nil, fmt.Errorf("%w: can only generate the same kind of PoSt: sector %d is %d, sector %d is %d", cuzk.ErrInvalidInput, unique[0].SectorNumber, proofType, s.SectorNumber, s.PoStProofType)
		}
		r, err := toReplica(s)
		if err != nil {
			return 0, nil, fmt.Errorf("sector %d: %w", s.SectorNumber, err)
		}
		replicas[i] = r
	}
	return proofType, replicas, nil
}

// vanillaWorkers bounds the sectors read at once: reading is I/O (tree and replica files),
// and filecoin-proofs parallelises each sector's challenges itself.
func vanillaWorkers(n int) int {
	w := runtime.GOMAXPROCS(0)
	if w > 16 {
		w = 16
	}
	if w > n {
		w = n
	}
	if w < 1 {
		w = 1
	}
	return w
}

// vanillaProofs reads every sector's vanilla proof for a PoSt of proofType (sectors in
// ascending order; challenges computed over that order, as filecoin-proofs' path-based
// provers do). It returns the proofs in sector order, or the sectors whose proof failed
// (ascending) with an error naming them.
func vanillaProofs(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, replicas []cuzk.Replica) ([][]byte, []abi.SectorNumber, error) {
	ids := make([]uint64, len(replicas))
	for i, r := range replicas {
		ids[i] = r.Sector
	}
	challenges, err := cuzk.FallbackSectorChallenges(uint64(proofType), asByteArray32(randomness), uint64(minerID), ids)
	if err != nil {
		return nil, nil, err
	}
	if len(challenges.Sectors) != len(replicas) {
		return nil, nil, fmt.Errorf("%w: %d challenge sets for %d sectors", cuzk.ErrProofFailed, len(challenges.Sectors), len(replicas))
	}
	proofs := make([][]byte, len(replicas))
	errs := make([]error, len(replicas))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < vanillaWorkers(len(replicas)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				// Both lists are in ascending sector order.
				proofs[i], errs[i] = cuzk.SingleVanillaProof(replicas[i], challenges.Challenges[i])
			}
		}()
	}
	for i := range replicas {
		next <- i
	}
	close(next)
	wg.Wait()

	var faulty []abi.SectorNumber
	var all []error
	for i, err := range errs {
		if err != nil {
			faulty = append(faulty, abi.SectorNumber(replicas[i].Sector))
			all = append(all, err)
		}
	}
	if len(faulty) > 0 {
		return nil, faulty, fmt.Errorf("faulty sectors %v: %w", faulty, errors.Join(all...))
	}
	return proofs, nil, nil
}

// GenerateWinningPoSt proves a WinningPoSt over the challenged sectors: their vanilla proofs
// are read from their files, then proved by the engine.
func GenerateWinningPoSt(minerID abi.ActorID, privateSectorInfo SortedPrivateSectorInfo, randomness abi.PoStRandomness) ([]proof.PoStProof, error) {
	proofType, replicas, err := postSectors(privateSectorInfo.Values())
	if err != nil {
		return nil, err
	}
	vanilla, _, err := vanillaProofs(proofType, minerID, randomness, replicas)
	if err != nil {
		return nil, err
	}
	return GenerateWinningPoStWithVanilla(proofType, minerID, randomness, vanilla)
}

// GenerateWindowPoSt proves a whole WindowPoSt over the sectors: every sector's vanilla
// proof is read from its files (several at once); when any fails, nothing is proved and the
// failed sectors are returned as faulty with an error naming them, as filecoin-ffi does.
// Otherwise the engine proves every partition and the merged proof is returned.
func GenerateWindowPoSt(minerID abi.ActorID, privateSectorInfo SortedPrivateSectorInfo, randomness abi.PoStRandomness) ([]proof.PoStProof, []abi.SectorNumber, error) {
	proofType, replicas, err := postSectors(privateSectorInfo.Values())
	if err != nil {
		return nil, nil, err
	}
	vanilla, faulty, err := vanillaProofs(proofType, minerID, randomness, replicas)
	if err != nil {
		return nil, faulty, err
	}
	proofs, err := GenerateWindowPoStWithVanilla(proofType, minerID, randomness, vanilla)
	if err != nil {
		return nil, nil, err
	}
	return proofs, nil, nil
}

// GetNumPartitionForFallbackPost is the number of partitions of a WindowPoSt over
// numSectors sectors.
func GetNumPartitionForFallbackPost(proofType abi.RegisteredPoStProof, numSectors uint) (uint, error) {
	n, err := cuzk.NumPartitionsForFallbackPoSt(uint64(proofType), uint64(numSectors))
	return uint(n), err
}

// GetSealVersion is the proofs-api name of a registered seal proof.
func GetSealVersion(proofType abi.RegisteredSealProof) (string, error) {
	return cuzk.SealVersion(uint64(proofType))
}

// GetPoStVersion is the proofs-api name of a registered PoSt proof.
func GetPoStVersion(proofType abi.RegisteredPoStProof) (string, error) {
	return cuzk.PoStVersion(uint64(proofType))
}

func updateCommitments(oldSealedCID, newSealedCID, unsealedCID cid.Cid) (commROld, commRNew, commDNew []byte, err error) {
	if commROld, err = CIDToReplicaCommitment(oldSealedCID); err != nil {
		return nil, nil, nil, fmt.Errorf("transforming old CommR: %w", err)
	}
	if commRNew, err = CIDToReplicaCommitment(newSealedCID); err != nil {
		return nil, nil, nil, fmt.Errorf("transforming new CommR: %w", err)
	}
	if commDNew, err = CIDToDataCommitment(unsealedCID); err != nil {
		return nil, nil, nil, fmt.Errorf("transforming new CommD: %w", err)
	}
	return commROld, commRNew, commDNew, nil
}

// GenerateUpdateVanillaProofs reads a SnapDeals update's vanilla proofs, one per partition,
// from the updated replica and cache and the original sealed replica (sector key) and cache.
func (FunctionsSectorUpdate) GenerateUpdateVanillaProofs(proofType abi.RegisteredUpdateProof, oldSealedCID, newSealedCID, unsealedCID cid.Cid, newReplicaPath, newReplicaCachePath, sectorKeyPath, sectorKeyCachePath string) ([][]byte, error) {
	commROld, commRNew, commDNew, err := updateCommitments(oldSealedCID, newSealedCID, unsealedCID)
	if err != nil {
		return nil, err
	}
	return cuzk.UpdateVanillaProofs(uint64(proofType), commROld, commRNew, commDNew, cuzk.UpdatePaths{
		NewReplica:      newReplicaPath,
		NewReplicaCache: newReplicaCachePath,
		SectorKey:       sectorKeyPath,
		SectorKeyCache:  sectorKeyCachePath,
	})
}

// GenerateUpdateProof proves a SnapDeals update from its files: the vanilla proofs are read
// (GenerateUpdateVanillaProofs), then proved by the engine (GenerateUpdateProofWithVanilla).
func (s FunctionsSectorUpdate) GenerateUpdateProof(proofType abi.RegisteredUpdateProof, oldSealedCID, newSealedCID, unsealedCID cid.Cid, newReplicaPath, newReplicaCachePath, sectorKeyPath, sectorKeyCachePath string) ([]byte, error) {
	vanilla, err := s.GenerateUpdateVanillaProofs(proofType, oldSealedCID, newSealedCID, unsealedCID, newReplicaPath, newReplicaCachePath, sectorKeyPath, sectorKeyCachePath)
	if err != nil {
		return nil, err
	}
	return s.GenerateUpdateProofWithVanilla(proofType, oldSealedCID, newSealedCID, unsealedCID, vanilla)
}
