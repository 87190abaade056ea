package ffi

import (
	"errors"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/filecoin-project/go-state-types/proof"
)

// asByteArray32 is a 32-byte value as filecoin-ffi makes one from chain data
// (cgo.AsByteArray32): the first 32 bytes, zero-padded when shorter.
func asByteArray32(b []byte) []byte {
	out := make([]byte, 32)
	copy(out, b)
	return out
}

// VerifySeal checks a PoRep proof with filecoin-proofs' verifier.
func VerifySeal(info proof.SealVerifyInfo) (bool, error) {
	commR, err := CIDToReplicaCommitment(info.SealedCID)
	if err != nil {
		return false, err
	}
	commD, err := CIDToDataCommitment(info.UnsealedCID)
	if err != nil {
		return false, err
	}
	return cuzk.VerifySeal(uint64(info.SealProof), commR, commD, uint64(info.Miner), uint64(info.Number),
		asByteArray32(info.Randomness), asByteArray32(info.InteractiveRandomness), info.Proof)
}

// VerifyAggregateSeals checks a SnarkPack aggregate of seal proofs as filecoin-ffi does.
func VerifyAggregateSeals(aggregate proof.AggregateSealVerifyProofAndInfos) (bool, error) {
	if len(aggregate.Infos) == 0 {
		return false, errors.New("no seal verify infos")
	}
	inputs := make([]cuzk.AggregationInput, len(aggregate.Infos))
	for i, info := range aggregate.Infos {
		commR, err := CIDToReplicaCommitment(info.SealedCID)
		if err != nil {
			return false, err
		}
		commD, err := CIDToDataCommitment(info.UnsealedCID)
		if err != nil {
			return false, err
		}
		inputs[i] = cuzk.AggregationInput{
			Sector: uint64(info.Number),
			CommR:  commR,
			CommD:  commD,
			Ticket: asByteArray32(info.Randomness),
			Seed:   asByteArray32(info.InteractiveRandomness),
		}
	}
	return cuzk.VerifyAggregateSeals(uint64(aggregate.SealProof), uint64(aggregate.AggregateProof), uint64(aggregate.Miner), aggregate.Proof, inputs)
}

func postProofs(proofs []proof.PoStProof) []cuzk.PoStProof {
	out := make([]cuzk.PoStProof, len(proofs))
	for i, p := range proofs {
		out[i] = cuzk.PoStProof{Registered: uint64(p.PoStProof), Bytes: p.ProofBytes}
	}
	return out
}

// VerifyWinningPoSt checks a WinningPoSt proof as filecoin-ffi does: each challenged sector
// with its seal proof's WinningPoSt type, the proofs' bytes concatenated.
func VerifyWinningPoSt(info proof.WinningPoStVerifyInfo) (bool, error) {
	sectors := make([]cuzk.Sector, len(info.ChallengedSectors))
	for i, s := range info.ChallengedSectors {
		commR, err := CIDToReplicaCommitment(s.SealedCID)
		if err != nil {
			return false, err
		}
		winning, err := s.SealProof.RegisteredWinningPoStProof()
		if err != nil {
			return false, err
		}
		sectors[i] = cuzk.Sector{Registered: uint64(winning), Number: uint64(s.SectorNumber), CommR: commR}
	}
	return cuzk.VerifyWinningPoSt(asByteArray32(info.Randomness), uint64(info.Prover), sectors, postProofs(info.Proofs))
}

// VerifyWindowPoSt checks a WindowPoSt proof as filecoin-ffi does: the sectors with the first
// proof's type, every proof entry handed to filecoin-proofs (which accepts exactly one).
func VerifyWindowPoSt(info proof.WindowPoStVerifyInfo) (bool, error) {
	if len(info.Proofs) == 0 {
		return false, errors.New("nothing to verify")
	}
	sectors := make([]cuzk.Sector, len(info.ChallengedSectors))
	for i, s := range info.ChallengedSectors {
		commR, err := CIDToReplicaCommitment(s.SealedCID)
		if err != nil {
			return false, err
		}
		sectors[i] = cuzk.Sector{Registered: uint64(info.Proofs[0].PoStProof), Number: uint64(s.SectorNumber), CommR: commR}
	}
	return cuzk.VerifyWindowPoSt(asByteArray32(info.Randomness), uint64(info.Prover), sectors, postProofs(info.Proofs))
}

// VerifyUpdateProof checks a SnapDeals update proof.
func (FunctionsSectorUpdate) VerifyUpdateProof(info proof.ReplicaUpdateInfo) (bool, error) {
	old, err := CIDToReplicaCommitment(info.OldSealedSectorCID)
	if err != nil {
		return false, err
	}
	newR, err := CIDToReplicaCommitment(info.NewSealedSectorCID)
	if err != nil {
		return false, err
	}
	newD, err := CIDToDataCommitment(info.NewUnsealedSectorCID)
	if err != nil {
		return false, err
	}
	return cuzk.VerifyUpdate(uint64(info.UpdateProofType), old, newR, newD, info.Proof)
}
