package ffi

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/filecoin-project/go-state-types/proof"
)

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
	return cuzk.VerifySeal(uint64(info.SealProof), commR, commD, uint64(info.Miner), uint64(info.Number), info.Randomness, info.InteractiveRandomness, info.Proof)
}

func postInputs(proofs []proof.PoStProof, challenged []proof.SectorInfo) (uint64, []byte, []cuzk.Sector, error) {
	if len(proofs) == 0 {
		return 0, nil, nil, fmt.Errorf("%w: no proofs", cuzk.ErrInvalidInput)
	}
	var all []byte
	for _, p := range proofs {
		all = append(all, p.ProofBytes...)
	}
	sectors := make([]cuzk.Sector, len(challenged))
	for i, s := range challenged {
		commR, err := CIDToReplicaCommitment(s.SealedCID)
		if err != nil {
			return 0, nil, nil, err
		}
		sectors[i] = cuzk.Sector{Number: uint64(s.SectorNumber), CommR: commR}
	}
	return uint64(proofs[0].PoStProof), all, sectors, nil
}

// VerifyWinningPoSt checks a WinningPoSt proof.
func VerifyWinningPoSt(info proof.WinningPoStVerifyInfo) (bool, error) {
	reg, all, sectors, err := postInputs(info.Proofs, info.ChallengedSectors)
	if err != nil {
		return false, err
	}
	return cuzk.VerifyWinningPoSt(reg, info.Randomness, uint64(info.Prover), sectors, all)
}

// VerifyWindowPoSt checks a WindowPoSt proof.
func VerifyWindowPoSt(info proof.WindowPoStVerifyInfo) (bool, error) {
	reg, all, sectors, err := postInputs(info.Proofs, info.ChallengedSectors)
	if err != nil {
		return false, err
	}
	return cuzk.VerifyWindowPoSt(reg, info.Randomness, uint64(info.Prover), sectors, all)
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
