// Package ffi mirrors filecoin-ffi's proving functions with the same names and go-state-types
// signatures, backed by the library's process-wide default engine (cuzk.Default: opened on
// first use with the default config and CUZK_* environment overrides, shared with C callers of
// the one-shot cuzk_prove_* functions). A node swaps its import path to use it.
package ffi

import (
	"context"
	"fmt"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
)

func prove(submit func(e *cuzk.Engine) (cuzk.JobID, error)) ([]byte, error) {
	e, err := cuzk.Default()
	if err != nil {
		return nil, err
	}
	id, err := submit(e)
	if err != nil {
		return nil, err
	}
	return e.Await(context.Background(), id)
}

// SealCommitPhase2 proves PoRep C2 from the C1 output (the registered proof comes from it).
func SealCommitPhase2(phase1Output []byte, sectorNum abi.SectorNumber, minerID abi.ActorID) ([]byte, error) {
	return prove(func(e *cuzk.Engine) (cuzk.JobID, error) {
		return e.SubmitPoRep(phase1Output, cuzk.RegisteredFromC1, uint64(sectorNum), uint64(minerID))
	})
}

// SealCommitPhase2CircuitProofs proves the circuit (partition) proofs of a C2 without a miner
// id, for AggregateSealProofs: interactive and NI-PoRep alike, never aggregated. Each partition
// proof is checked against the verifying key before it is returned.
func SealCommitPhase2CircuitProofs(phase1Output []byte, sectorNum abi.SectorNumber) ([]byte, error) {
	return prove(func(e *cuzk.Engine) (cuzk.JobID, error) {
		return e.SubmitPoRepCircuitProofs(phase1Output, uint64(sectorNum))
	})
}

// AggregateSealProofs aggregates seal proofs (SnarkPack) as filecoin-ffi does: one proof per
// entry of aggregateInfo.Infos, whose SealedCID and InteractiveRandomness it uses.
func AggregateSealProofs(aggregateInfo proof.AggregateSealVerifyProofAndInfos, proofs [][]byte) ([]byte, error) {
	commRs := make([][]byte, len(aggregateInfo.Infos))
	seeds := make([][]byte, len(aggregateInfo.Infos))
	for i, info := range aggregateInfo.Infos {
		commR, err := CIDToReplicaCommitment(info.SealedCID)
		if err != nil {
			return nil, err
		}
		commRs[i] = commR
		seeds[i] = asByteArray32(info.InteractiveRandomness)
	}
	return cuzk.AggregateSealProofs(uint64(aggregateInfo.SealProof), uint64(aggregateInfo.AggregateProof), commRs, seeds, proofs)
}

// GenerateWinningPoStWithVanilla proves WinningPoSt from vanilla proofs.
func GenerateWinningPoStWithVanilla(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) {
	out, err := prove(func(e *cuzk.Engine) (cuzk.JobID, error) {
		return e.SubmitWinningPoSt(uint64(proofType), asByteArray32(randomness), uint64(minerID), proofs)
	})
	if err != nil {
		return nil, err
	}
	return []proof.PoStProof{{PoStProof: proofType, ProofBytes: out}}, nil
}

// PartitionProof is one WindowPoSt partition's proof, as in filecoin-ffi.
type PartitionProof proof.PoStProof

// GenerateSinglePartitionWindowPoStWithVanilla proves one WindowPoSt partition.
func GenerateSinglePartitionWindowPoStWithVanilla(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partitionIndex uint) (*PartitionProof, error) {
	out, err := prove(func(e *cuzk.Engine) (cuzk.JobID, error) {
		return e.SubmitWindowPoSt(uint64(proofType), asByteArray32(randomness), uint64(minerID), proofs, uint64(partitionIndex))
	})
	if err != nil {
		return nil, err
	}
	return &PartitionProof{PoStProof: proofType, ProofBytes: out}, nil
}

// GenerateWindowPoStWithVanilla proves a whole WindowPoSt: the vanilla proofs (in sector-id
// order) are cut into partitions, each is proved, and the merged proof is returned.
func GenerateWindowPoStWithVanilla(proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) {
	e, err := cuzk.Default()
	if err != nil {
		return nil, err
	}
	out, err := e.ProveWindowPoStAll(uint64(proofType), asByteArray32(randomness), uint64(minerID), proofs)
	if err != nil {
		return nil, err
	}
	return []proof.PoStProof{{PoStProof: proofType, ProofBytes: out}}, nil
}

// MergeWindowPoStPartitionProofs concatenates partition proofs in order.
func MergeWindowPoStPartitionProofs(proofType abi.RegisteredPoStProof, partitionProofs []PartitionProof) (*proof.PoStProof, error) {
	var merged []byte
	for i, p := range partitionProofs {
		if len(p.ProofBytes) != 192 {
			return nil, fmt.Errorf("%w: partition proof %d has %d bytes", cuzk.ErrInvalidInput, i, len(p.ProofBytes))
		}
		merged = append(merged, p.ProofBytes...)
	}
	return &proof.PoStProof{PoStProof: proofType, ProofBytes: merged}, nil
}

// FunctionsSectorUpdate groups the SnapDeals functions as filecoin-ffi does.
type FunctionsSectorUpdate struct{}

// SectorUpdate is the SnapDeals function set.
var SectorUpdate = FunctionsSectorUpdate{}

// GenerateUpdateProofWithVanilla proves a SnapDeals update from per-partition vanilla proofs.
func (FunctionsSectorUpdate) GenerateUpdateProofWithVanilla(proofType abi.RegisteredUpdateProof, oldSealedCID, newSealedCID, unsealedCID cid.Cid, vanillaProofs [][]byte) ([]byte, error) {
	commROld, err := CIDToReplicaCommitment(oldSealedCID)
	if err != nil {
		return nil, err
	}
	commRNew, err := CIDToReplicaCommitment(newSealedCID)
	if err != nil {
		return nil, err
	}
	commDNew, err := CIDToDataCommitment(unsealedCID)
	if err != nil {
		return nil, err
	}
	return prove(func(e *cuzk.Engine) (cuzk.JobID, error) {
		return e.SubmitSnapDeals(uint64(proofType), vanillaProofs, commROld, commRNew, commDNew)
	})
}

// GetGPUDevices lists the GPUs cuzk can use, vendor-named as Curio expects. The CPU build
// has none.
func GetGPUDevices() ([]string, error) {
	return cuzk.GPUDevices()
}
