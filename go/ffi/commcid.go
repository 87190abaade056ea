package ffi

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/go/cuzk"
	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

// Filecoin commitment CIDs (as go-fil-commcid defines them).
const (
	codecUnsealed = 0xf101 // fil-commitment-unsealed
	codecSealed   = 0xf102 // fil-commitment-sealed
	hashSealed    = 0xb401 // poseidon-bls12_381-a2-fc1
	hashUnsealed  = 0x1012 // sha2-256-trunc254-padded
)

func commitmentFromCID(c cid.Cid, codec uint64, hash uint64, what string) ([]byte, error) {
	if !c.Defined() {
		return nil, fmt.Errorf("%w: %s CID is undefined", cuzk.ErrInvalidInput, what)
	}
	p := c.Prefix()
	if p.Codec != codec || p.MhType != hash {
		return nil, fmt.Errorf("%w: %s CID has codec %#x / hash %#x", cuzk.ErrInvalidInput, what, p.Codec, p.MhType)
	}
	d, err := multihash.Decode(c.Hash())
	if err != nil {
		return nil, fmt.Errorf("%w: %s CID: %v", cuzk.ErrInvalidInput, what, err)
	}
	if len(d.Digest) != 32 {
		return nil, fmt.Errorf("%w: %s commitment has %d bytes", cuzk.ErrInvalidInput, what, len(d.Digest))
	}
	return d.Digest, nil
}

func cidFromCommitment(comm []byte, codec uint64, hash uint64) (cid.Cid, error) {
	if len(comm) != 32 {
		return cid.Undef, fmt.Errorf("%w: commitment has %d bytes", cuzk.ErrInvalidInput, len(comm))
	}
	mh, err := multihash.Encode(comm, hash)
	if err != nil {
		return cid.Undef, err
	}
	return cid.NewCidV1(codec, mh), nil
}

// CIDToReplicaCommitment returns comm_r from a sealed-sector CID.
func CIDToReplicaCommitment(c cid.Cid) ([]byte, error) {
	return commitmentFromCID(c, codecSealed, hashSealed, "sealed")
}

// CIDToDataCommitment returns comm_d from an unsealed-sector CID.
func CIDToDataCommitment(c cid.Cid) ([]byte, error) {
	return commitmentFromCID(c, codecUnsealed, hashUnsealed, "unsealed")
}

// ReplicaCommitmentToCID makes a sealed-sector CID from comm_r.
func ReplicaCommitmentToCID(commR []byte) (cid.Cid, error) {
	return cidFromCommitment(commR, codecSealed, hashSealed)
}

// DataCommitmentToCID makes an unsealed-sector CID from comm_d.
func DataCommitmentToCID(commD []byte) (cid.Cid, error) {
	return cidFromCommitment(commD, codecUnsealed, hashUnsealed)
}
