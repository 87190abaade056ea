package interop

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	cuzk "github.com/cuzk-dev/cuzk/go/cuzk"
	cuzkffi "github.com/cuzk-dev/cuzk/go/ffi"
	filffi "github.com/filecoin-project/filecoin-ffi"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
)

const miner = abi.ActorID(1000)

// sealed is a 2 KiB sector sealed by filecoin-ffi: its files, commitments and C1 output.
type sealed struct {
	proofType    abi.RegisteredSealProof
	number       abi.SectorNumber
	ticket, seed []byte
	sealedCID    cid.Cid
	unsealedCID  cid.Cid
	cacheDir     string
	sealedPath   string
	stagedPath   string
	pieces       []abi.PieceInfo
	c1           []byte
}

func random32(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	// A valid field element, as chain randomness is used, whose last byte is never zero: the
	// 31-byte cases drop it, and filecoin-ffi pads a short array with zeros, so a zero last
	// byte would make the truncated value equal the original (one run in 64 failed on that).
	b[31] = 1 + b[31]%0x3f
	return b
}

// stage writes one full-size piece of random data into a staged sector file.
func stage(t *testing.T, dir string, proofType abi.RegisteredSealProof) (string, []abi.PieceInfo) {
	t.Helper()
	data := make([]byte, abi.PaddedPieceSize(2048).Unpadded())
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	piecePath := filepath.Join(dir, "piece")
	if err := os.WriteFile(piecePath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	piece, err := os.Open(piecePath)
	if err != nil {
		t.Fatal(err)
	}
	defer piece.Close()
	stagedPath := filepath.Join(dir, "staged")
	staged, err := os.Create(stagedPath)
	if err != nil {
		t.Fatal(err)
	}
	defer staged.Close()
	_, pieceCID, err := filffi.WriteWithoutAlignment(proofType, piece, abi.UnpaddedPieceSize(len(data)), staged)
	if err != nil {
		t.Fatalf("WriteWithoutAlignment: %v", err)
	}
	return stagedPath, []abi.PieceInfo{{Size: 2048, PieceCID: pieceCID}}
}

// seal seals a sector with filecoin-ffi up to its C1 output.
func seal(t *testing.T, proofType abi.RegisteredSealProof, number abi.SectorNumber) *sealed {
	t.Helper()
	dir := t.TempDir()
	s := &sealed{proofType: proofType, number: number, ticket: random32(t), seed: random32(t),
		cacheDir: filepath.Join(dir, "cache"), sealedPath: filepath.Join(dir, "sealed")}
	if err := os.MkdirAll(s.cacheDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.sealedPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.stagedPath, s.pieces = stage(t, dir, proofType)
	pc1, err := filffi.SealPreCommitPhase1(proofType, s.cacheDir, s.stagedPath, s.sealedPath, number, miner, s.ticket, s.pieces)
	if err != nil {
		t.Fatalf("PC1 (%d): %v", proofType, err)
	}
	s.sealedCID, s.unsealedCID, err = filffi.SealPreCommitPhase2(pc1, s.cacheDir, s.sealedPath)
	if err != nil {
		t.Fatalf("PC2 (%d): %v", proofType, err)
	}
	if proofType == abi.RegisteredSealProof_StackedDrg2KiBV1_1_Feat_SyntheticPoRep {
		if err := filffi.GenerateSynthProofs(proofType, s.sealedCID, s.unsealedCID, s.cacheDir, s.sealedPath, number, miner, s.ticket, s.pieces); err != nil {
			t.Fatalf("GenerateSynthProofs: %v", err)
		}
	}
	s.c1, err = filffi.SealCommitPhase1(proofType, s.sealedCID, s.unsealedCID, s.cacheDir, s.sealedPath, number, miner, s.ticket, s.seed, s.pieces)
	if err != nil {
		t.Fatalf("C1 (%d): %v", proofType, err)
	}
	return s
}

func (s *sealed) verifyInfo(p []byte) proof.SealVerifyInfo {
	return proof.SealVerifyInfo{
		SealProof: s.proofType, SectorID: abi.SectorID{Miner: miner, Number: s.number},
		Randomness: s.ticket, InteractiveRandomness: s.seed, Proof: p,
		SealedCID: s.sealedCID, UnsealedCID: s.unsealedCID,
	}
}

func (s *sealed) private(t *testing.T, postType abi.RegisteredPoStProof) (filffi.PrivateSectorInfo, cuzkffi.PrivateSectorInfo) {
	info := proof.SectorInfo{SealProof: s.proofType, SectorNumber: s.number, SealedCID: s.sealedCID}
	return filffi.PrivateSectorInfo{SectorInfo: info, CacheDirPath: s.cacheDir, PoStProofType: postType, SealedSectorPath: s.sealedPath},
		cuzkffi.PrivateSectorInfo{SectorInfo: info, CacheDirPath: s.cacheDir, PoStProofType: postType, SealedSectorPath: s.sealedPath}
}

type verdict struct {
	valid bool
	err   error
}

// filecoinPanics runs a filecoin-ffi call, turning a Go panic inside it (its cgo wrappers
// panic on some inputs, e.g. VerifyWinningPoSt without proofs) into an error.
func filecoinPanics(f func() (bool, error)) (valid bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			valid, err = false, fmt.Errorf("filecoin-ffi panicked: %v", p)
		}
	}()
	return f()
}

// agree checks that cuzk and filecoin-ffi give the same verdict (valid, or an error) and
// that it is the expected one. Where filecoin-ffi panics, cuzk must return an error.
func agree(t *testing.T, name string, want bool, fil, ours func() (bool, error)) {
	t.Helper()
	f, ferr := filecoinPanics(fil)
	c, cerr := ours()
	if ferr != nil {
		first, _, _ := strings.Cut(ferr.Error(), "\n")
		t.Logf("%s: filecoin-ffi: %s; cuzk: (%v, %v)", name, first, c, cerr)
	}
	if f != c || (ferr == nil) != (cerr == nil) {
		t.Errorf("%s: filecoin-ffi says (%v, %v), cuzk says (%v, %v)", name, f, ferr, c, cerr)
		return
	}
	if f != want {
		t.Errorf("%s: both say %v (errors: %v / %v), want %v", name, f, ferr, cerr, want)
	}
}

func tamper(p []byte) []byte {
	out := append([]byte(nil), p...)
	out[len(out)/2] ^= 0x01
	return out
}

// checkSealVerifiers compares VerifySeal on a valid proof and on broken inputs. A
// non-interactive PoRep has no interactive seed: another one does not matter.
func checkSealVerifiers(t *testing.T, s *sealed, p []byte, nonInteractive bool) {
	t.Helper()
	cases := []struct {
		name string
		info proof.SealVerifyInfo
		want bool
	}{
		{"valid", s.verifyInfo(p), true},
		{"tampered", s.verifyInfo(tamper(p)), false},
		{"truncated", s.verifyInfo(p[:len(p)-1]), false},
		{"empty", s.verifyInfo(nil), false},
	}
	other := s.verifyInfo(p)
	other.Miner = miner + 1
	cases = append(cases, struct {
		name string
		info proof.SealVerifyInfo
		want bool
	}{"other miner", other, false})
	wrongSector := s.verifyInfo(p)
	wrongSector.Number++
	cases = append(cases, struct {
		name string
		info proof.SealVerifyInfo
		want bool
	}{"other sector", wrongSector, false})
	short := s.verifyInfo(p)
	short.InteractiveRandomness = short.InteractiveRandomness[:31]
	cases = append(cases, struct {
		name string
		info proof.SealVerifyInfo
		want bool
	}{"31-byte seed", short, nonInteractive})
	for _, c := range cases {
		info := c.info
		agree(t, "VerifySeal "+c.name, c.want,
			func() (bool, error) { return filffi.VerifySeal(info) },
			func() (bool, error) { return cuzkffi.VerifySeal(info) })
	}
}

// aggregateInfo lists sealed sectors for (Verify)AggregateSeals.
func aggregateInfo(pt abi.RegisteredSealProof, sectors ...*sealed) proof.AggregateSealVerifyProofAndInfos {
	info := proof.AggregateSealVerifyProofAndInfos{Miner: miner, SealProof: pt, AggregateProof: abi.RegisteredAggregationProof_SnarkPackV2}
	for _, s := range sectors {
		info.Infos = append(info.Infos, proof.AggregateSealVerifyInfo{Number: s.number, Randomness: s.ticket,
			InteractiveRandomness: s.seed, SealedCID: s.sealedCID, UnsealedCID: s.unsealedCID})
	}
	return info
}

// PoRep V1_1, the version nodes seal with: cuzk's circuit proofs (what an interactive C2
// returns) verify with filecoin-ffi, filecoin-ffi's C2 verifies with cuzk, both verifiers agree
// on broken inputs; two sectors aggregated (SnarkPack V2) by cuzk verify with filecoin-ffi,
// cuzk's proofs aggregated by filecoin-ffi verify with cuzk, and the aggregate verifiers agree.
// (A 2 KiB PoRep partition is 2.69M constraints: each C2 here takes about a minute.)
func TestPoRepAndAggregation(t *testing.T) {
	pt := abi.RegisteredSealProof_StackedDrg2KiBV1_1
	a, b := seal(t, pt, 11), seal(t, pt, 12)
	var ours [][]byte
	for _, s := range []*sealed{a, b} {
		c, err := cuzkffi.SealCommitPhase2CircuitProofs(s.c1, s.number)
		if err != nil {
			t.Fatalf("cuzk circuit proofs of %d: %v", s.number, err)
		}
		if ok, err := filffi.VerifySeal(s.verifyInfo(c)); !ok || err != nil {
			t.Fatalf("filecoin-ffi rejects cuzk's C2 of %d: %v %v", s.number, ok, err)
		}
		ours = append(ours, c)
	}
	checkSealVerifiers(t, a, ours[0], false)
	theirs, err := filffi.SealCommitPhase2(a.c1, a.number, miner)
	if err != nil {
		t.Fatalf("filecoin-ffi C2: %v", err)
	}
	agree(t, "VerifySeal filecoin-ffi's proof", true,
		func() (bool, error) { return filffi.VerifySeal(a.verifyInfo(theirs)) },
		func() (bool, error) { return cuzkffi.VerifySeal(a.verifyInfo(theirs)) })

	info := aggregateInfo(pt, a, b)
	agg, err := cuzkffi.AggregateSealProofs(info, ours)
	if err != nil {
		t.Fatalf("cuzk aggregate: %v", err)
	}
	theirAgg, err := filffi.AggregateSealProofs(info, ours)
	if err != nil {
		t.Fatalf("filecoin-ffi aggregate of cuzk's proofs: %v", err)
	}
	with := func(p []byte, edit func(*proof.AggregateSealVerifyProofAndInfos)) proof.AggregateSealVerifyProofAndInfos {
		c := info
		c.Infos = append([]proof.AggregateSealVerifyInfo(nil), info.Infos...)
		c.Proof = p
		if edit != nil {
			edit(&c)
		}
		return c
	}
	cases := []struct {
		name string
		in   proof.AggregateSealVerifyProofAndInfos
		want bool
	}{
		{"cuzk's aggregate", with(agg, nil), true},
		{"filecoin-ffi's aggregate", with(theirAgg, nil), true},
		{"tampered", with(tamper(agg), nil), false},
		{"truncated", with(agg[:len(agg)-1], nil), false},
		{"other miner", with(agg, func(c *proof.AggregateSealVerifyProofAndInfos) { c.Miner++ }), false},
		{"sectors swapped", with(agg, func(c *proof.AggregateSealVerifyProofAndInfos) { c.Infos[0], c.Infos[1] = c.Infos[1], c.Infos[0] }), false},
		{"one sector missing", with(agg, func(c *proof.AggregateSealVerifyProofAndInfos) { c.Infos = c.Infos[1:] }), false},
		{"no sectors", with(agg, func(c *proof.AggregateSealVerifyProofAndInfos) { c.Infos = nil }), false},
		{"SnarkPack V1", with(agg, func(c *proof.AggregateSealVerifyProofAndInfos) {
			c.AggregateProof = abi.RegisteredAggregationProof_SnarkPackV1
		}), false},
	}
	for _, c := range cases {
		in := c.in
		agree(t, "VerifyAggregateSeals "+c.name, c.want,
			func() (bool, error) { return filffi.VerifyAggregateSeals(in) },
			func() (bool, error) { return cuzkffi.VerifyAggregateSeals(in) })
	}
	if _, err := cuzkffi.AggregateSealProofs(info, ours[:1]); err == nil {
		t.Error("cuzk aggregated one proof for two sectors")
	}
	t.Logf("PoRep V1_1: cuzk C2 verified by filecoin-ffi and the reverse; aggregates of %d bytes verified both ways", len(agg))
}

// The other seal proof versions (V1, SyntheticPoRep, NI-PoRep): filecoin-ffi seals, cuzk's
// SealCommitPhase2 proves, filecoin-ffi verifies, and the verifiers agree on broken inputs.
// An NI-PoRep C2 is 13 partitions at 2 KiB, SnarkPack-aggregated: about ten minutes here.
func TestPoRepOtherVersions(t *testing.T) {
	for _, pt := range []abi.RegisteredSealProof{
		abi.RegisteredSealProof_StackedDrg2KiBV1,
		abi.RegisteredSealProof_StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
		abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep,
	} {
		s := seal(t, pt, abi.SectorNumber(20+pt))
		ours, err := cuzkffi.SealCommitPhase2(s.c1, s.number, miner)
		if err != nil {
			t.Fatalf("cuzk C2 (%d): %v", pt, err)
		}
		if ok, err := filffi.VerifySeal(s.verifyInfo(ours)); !ok || err != nil {
			t.Fatalf("filecoin-ffi rejects cuzk's proof (%d): %v %v", pt, ok, err)
		}
		checkSealVerifiers(t, s, ours, pt == abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep)
		t.Logf("seal proof %d: cuzk's %d-byte C2 verified by filecoin-ffi", pt, len(ours))
	}
}

// postSectors seals n V1_1 sectors for the PoSt tests.
func postSectors(t *testing.T, n int, first abi.SectorNumber) []*sealed {
	var out []*sealed
	for i := 0; i < n; i++ {
		out = append(out, seal(t, abi.RegisteredSealProof_StackedDrg2KiBV1_1, first+abi.SectorNumber(i)))
	}
	return out
}

func sectorInfos(sectors []*sealed) []proof.SectorInfo {
	var out []proof.SectorInfo
	for _, s := range sectors {
		out = append(out, proof.SectorInfo{SealProof: s.proofType, SectorNumber: s.number, SealedCID: s.sealedCID})
	}
	return out
}

// vanillaProofs makes the vanilla proofs of sectors with filecoin-ffi, in sector order.
func vanillaProofs(t *testing.T, postType abi.RegisteredPoStProof, randomness []byte, sectors []*sealed) [][]byte {
	t.Helper()
	var ids []abi.SectorNumber
	for _, s := range sectors {
		ids = append(ids, s.number)
	}
	ch, err := filffi.GeneratePoStFallbackSectorChallenges(postType, miner, randomness, ids)
	if err != nil {
		t.Fatalf("challenges: %v", err)
	}
	var out [][]byte
	for _, s := range sectors {
		fil, _ := s.private(t, postType)
		v, err := filffi.GenerateSingleVanillaProof(fil, ch.Challenges[s.number])
		if err != nil {
			t.Fatalf("vanilla proof of %d: %v", s.number, err)
		}
		out = append(out, v)
	}
	return out
}

// WindowPoSt V1 and V1_1 over three partitions (five sectors, two per partition at 2 KiB):
// whole, per partition and merged, path-based; with a faulty sector; verifiers agree.
func TestWindowPoSt(t *testing.T) {
	sectors := postSectors(t, 5, 200)
	infos := sectorInfos(sectors)
	for _, pt := range []abi.RegisteredPoStProof{
		abi.RegisteredPoStProof_StackedDrgWindow2KiBV1,
		abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1,
	} {
		randomness := random32(t)
		vanilla := vanillaProofs(t, pt, randomness, sectors)
		verifyInfo := func(proofs []proof.PoStProof) proof.WindowPoStVerifyInfo {
			return proof.WindowPoStVerifyInfo{Randomness: randomness, Proofs: proofs, ChallengedSectors: infos, Prover: miner}
		}
		ours, err := cuzkffi.GenerateWindowPoStWithVanilla(pt, miner, randomness, vanilla)
		if err != nil {
			t.Fatalf("cuzk WindowPoSt (%d): %v", pt, err)
		}
		if ok, err := filffi.VerifyWindowPoSt(verifyInfo(ours)); !ok || err != nil {
			t.Fatalf("filecoin-ffi rejects cuzk's WindowPoSt (%d): %v %v", pt, ok, err)
		}
		var parts []cuzkffi.PartitionProof
		for k := 0; k < 3; k++ {
			chunk := vanilla[2*k : min(2*k+2, len(vanilla))]
			p, err := cuzkffi.GenerateSinglePartitionWindowPoStWithVanilla(pt, miner, randomness, chunk, uint(k))
			if err != nil {
				t.Fatalf("cuzk partition %d (%d): %v", k, pt, err)
			}
			parts = append(parts, *p)
		}
		merged, err := cuzkffi.MergeWindowPoStPartitionProofs(pt, parts)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := filffi.VerifyWindowPoSt(verifyInfo([]proof.PoStProof{*merged})); !ok || err != nil {
			t.Fatalf("filecoin-ffi rejects cuzk's merged partitions (%d): %v %v", pt, ok, err)
		}
		var fil []filffi.PrivateSectorInfo
		var our []cuzkffi.PrivateSectorInfo
		for _, s := range sectors {
			f, o := s.private(t, pt)
			fil, our = append(fil, f), append(our, o)
		}
		pathProofs, faulty, err := cuzkffi.GenerateWindowPoSt(miner, cuzkffi.NewSortedPrivateSectorInfo(our...), randomness)
		if err != nil || len(faulty) != 0 {
			t.Fatalf("cuzk path-based WindowPoSt (%d): %v faulty %v", pt, err, faulty)
		}
		if ok, err := filffi.VerifyWindowPoSt(verifyInfo(pathProofs)); !ok || err != nil {
			t.Fatalf("filecoin-ffi rejects cuzk's path-based WindowPoSt (%d): %v %v", pt, ok, err)
		}
		theirs, err := filffi.GenerateWindowPoStWithVanilla(pt, miner, randomness, vanilla)
		if err != nil {
			t.Fatal(err)
		}
		p := theirs[0]
		cases := []struct {
			name string
			info proof.WindowPoStVerifyInfo
			want bool
		}{
			{"valid", verifyInfo(theirs), true},
			{"tampered", verifyInfo([]proof.PoStProof{{PoStProof: pt, ProofBytes: tamper(p.ProofBytes)}}), false},
			{"truncated", verifyInfo([]proof.PoStProof{{PoStProof: pt, ProofBytes: p.ProofBytes[:len(p.ProofBytes)-192]}}), false},
			{"two entries", verifyInfo([]proof.PoStProof{p, p}), false},
			{"no proofs", verifyInfo(nil), false},
			{"other randomness", proof.WindowPoStVerifyInfo{Randomness: random32(t), Proofs: theirs, ChallengedSectors: infos, Prover: miner}, false},
			{"31-byte randomness", proof.WindowPoStVerifyInfo{Randomness: randomness[:31], Proofs: theirs, ChallengedSectors: infos, Prover: miner}, false},
			// The prover id is not an input of the circuit (it only picks WinningPoSt sectors).
			{"other miner", proof.WindowPoStVerifyInfo{Randomness: randomness, Proofs: theirs, ChallengedSectors: infos, Prover: miner + 1}, true},
			{"a sector missing", proof.WindowPoStVerifyInfo{Randomness: randomness, Proofs: theirs, ChallengedSectors: infos[1:], Prover: miner}, false},
		}
		for _, c := range cases {
			info := c.info
			agree(t, "VerifyWindowPoSt "+c.name, c.want,
				func() (bool, error) { return filffi.VerifyWindowPoSt(info) },
				func() (bool, error) { return cuzkffi.VerifyWindowPoSt(info) })
		}

		// A faulty sector: its comm_r is not the one its files commit to. Both report it and
		// prove nothing.
		broken := *sectors[3]
		broken.sealedCID = sectors[4].sealedCID
		bf, bo := broken.private(t, pt)
		fil[3], our[3] = bf, bo
		_, filFaulty, filErr := filffi.GenerateWindowPoSt(miner, filffi.NewSortedPrivateSectorInfo(fil...), randomness)
		_, ourFaulty, ourErr := cuzkffi.GenerateWindowPoSt(miner, cuzkffi.NewSortedPrivateSectorInfo(our...), randomness)
		if filErr == nil || ourErr == nil {
			t.Fatalf("a faulty sector proved (%d): filecoin-ffi %v, cuzk %v", pt, filErr, ourErr)
		}
		if !sameSectors(filFaulty, ourFaulty) || len(ourFaulty) != 1 || ourFaulty[0] != sectors[3].number {
			t.Fatalf("faulty sectors (%d): filecoin-ffi %v, cuzk %v, want [%d]", pt, filFaulty, ourFaulty, sectors[3].number)
		}
		// A bad vanilla proof (made for other randomness) is named before any proving.
		bad := append([][]byte(nil), vanilla...)
		bad[1] = vanillaProofs(t, pt, random32(t), sectors[1:2])[0]
		_, err = cuzkffi.GenerateWindowPoStWithVanilla(pt, miner, randomness, bad)
		if !errors.Is(err, cuzk.ErrFaultySectors) {
			t.Fatalf("a bad vanilla proof (%d): %v, want ErrFaultySectors", pt, err)
		}
		if got := cuzk.FaultySectors(err); pt == abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1 &&
			(len(got) != 1 || got[0] != uint64(sectors[1].number)) {
			t.Fatalf("a bad vanilla proof (%d): faulty %v, want [%d]", pt, got, sectors[1].number)
		}
		t.Logf("WindowPoSt %d: cuzk whole / per partition / path-based verified by filecoin-ffi; faulty sector %d reported by both", pt, sectors[3].number)
	}
}

func sameSectors(a, b []abi.SectorNumber) bool {
	sort.Slice(a, func(i, j int) bool { return a[i] < a[j] })
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// WinningPoSt: challenge selection, vanilla and path-based proving, verifiers agree.
func TestWinningPoSt(t *testing.T) {
	sectors := postSectors(t, 3, 300)
	pt := abi.RegisteredPoStProof_StackedDrgWinning2KiBV1
	randomness := random32(t)
	filIdx, err := filffi.GenerateWinningPoStSectorChallenge(pt, miner, randomness, uint64(len(sectors)))
	if err != nil {
		t.Fatal(err)
	}
	ourIdx, err := cuzkffi.GenerateWinningPoStSectorChallenge(pt, miner, randomness, uint64(len(sectors)))
	if err != nil || len(ourIdx) != len(filIdx) || ourIdx[0] != filIdx[0] {
		t.Fatalf("sector challenge: cuzk %v %v, filecoin-ffi %v", ourIdx, err, filIdx)
	}
	chosen := []*sealed{sectors[filIdx[0]]}
	infos := sectorInfos(chosen)
	vanilla := vanillaProofs(t, pt, randomness, chosen)
	ours, err := cuzkffi.GenerateWinningPoStWithVanilla(pt, miner, randomness, vanilla)
	if err != nil {
		t.Fatalf("cuzk WinningPoSt: %v", err)
	}
	verifyInfo := func(proofs []proof.PoStProof) proof.WinningPoStVerifyInfo {
		return proof.WinningPoStVerifyInfo{Randomness: randomness, Proofs: proofs, ChallengedSectors: infos, Prover: miner}
	}
	if ok, err := filffi.VerifyWinningPoSt(verifyInfo(ours)); !ok || err != nil {
		t.Fatalf("filecoin-ffi rejects cuzk's WinningPoSt: %v %v", ok, err)
	}
	_, our := chosen[0].private(t, pt)
	pathProofs, err := cuzkffi.GenerateWinningPoSt(miner, cuzkffi.NewSortedPrivateSectorInfo(our), randomness)
	if err != nil {
		t.Fatalf("cuzk path-based WinningPoSt: %v", err)
	}
	if ok, err := filffi.VerifyWinningPoSt(verifyInfo(pathProofs)); !ok || err != nil {
		t.Fatalf("filecoin-ffi rejects cuzk's path-based WinningPoSt: %v %v", ok, err)
	}
	t.Logf("WinningPoSt: challenged sector %d as filecoin-ffi picks it; cuzk's proofs (vanilla and path-based) verified by filecoin-ffi", filIdx[0])
	theirs, err := filffi.GenerateWinningPoStWithVanilla(pt, miner, randomness, vanilla)
	if err != nil {
		t.Fatal(err)
	}
	p := theirs[0]
	otherType := append([]proof.SectorInfo(nil), infos...)
	otherType[0].SealProof = abi.RegisteredSealProof_StackedDrg8MiBV1_1
	cases := []struct {
		name string
		info proof.WinningPoStVerifyInfo
		want bool
	}{
		{"valid", verifyInfo(theirs), true},
		{"tampered", verifyInfo([]proof.PoStProof{{PoStProof: pt, ProofBytes: tamper(p.ProofBytes)}}), false},
		{"truncated", verifyInfo([]proof.PoStProof{{PoStProof: pt, ProofBytes: p.ProofBytes[:100]}}), false},
		{"no proofs", verifyInfo(nil), false},
		{"proof type from the sector", verifyInfo([]proof.PoStProof{{PoStProof: abi.RegisteredPoStProof_StackedDrgWinning8MiBV1, ProofBytes: p.ProofBytes}}), true},
		{"sector of another size", proof.WinningPoStVerifyInfo{Randomness: randomness, Proofs: theirs, ChallengedSectors: otherType, Prover: miner}, false},
		// The prover id picks the challenged sector, it is not an input of the circuit: given
		// the same challenged sectors, the proof verifies for any miner.
		{"other miner", proof.WinningPoStVerifyInfo{Randomness: randomness, Proofs: theirs, ChallengedSectors: infos, Prover: miner + 1}, true},
		{"31-byte randomness", proof.WinningPoStVerifyInfo{Randomness: randomness[:31], Proofs: theirs, ChallengedSectors: infos, Prover: miner}, false},
	}
	for _, c := range cases {
		info := c.info
		agree(t, "VerifyWinningPoSt "+c.name, c.want,
			func() (bool, error) { return filffi.VerifyWinningPoSt(info) },
			func() (bool, error) { return cuzkffi.VerifyWinningPoSt(info) })
	}
}

// SnapDeals: filecoin-ffi encodes new data into a sealed sector; cuzk proves the update from
// its vanilla proofs and from the sector files; the verifiers agree.
func TestSnapDeals(t *testing.T) {
	key := seal(t, abi.RegisteredSealProof_StackedDrg2KiBV1_1, 400)
	up := abi.RegisteredUpdateProof_StackedDrg2KiBV1
	dir := t.TempDir()
	stagedPath, pieces := stage(t, dir, key.proofType)
	replica := filepath.Join(dir, "update")
	replicaCache := filepath.Join(dir, "update-cache")
	if err := os.MkdirAll(replicaCache, 0o755); err != nil {
		t.Fatal(err)
	}
	// The new replica file must be as large as the sector key (filecoin-proofs writes into it).
	if err := os.WriteFile(replica, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	newSealed, newUnsealed, err := filffi.SectorUpdate.EncodeInto(up, replica, replicaCache, key.sealedPath, key.cacheDir, stagedPath, pieces)
	if err != nil {
		t.Fatalf("EncodeInto: %v", err)
	}
	vanilla, err := filffi.SectorUpdate.GenerateUpdateVanillaProofs(up, key.sealedCID, newSealed, newUnsealed, replica, replicaCache, key.sealedPath, key.cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := cuzkffi.SectorUpdate.GenerateUpdateProofWithVanilla(up, key.sealedCID, newSealed, newUnsealed, vanilla)
	if err != nil {
		t.Fatalf("cuzk update proof: %v", err)
	}
	info := func(p []byte) proof.ReplicaUpdateInfo {
		return proof.ReplicaUpdateInfo{UpdateProofType: up, OldSealedSectorCID: key.sealedCID, NewSealedSectorCID: newSealed, NewUnsealedSectorCID: newUnsealed, Proof: p}
	}
	if ok, err := filffi.SectorUpdate.VerifyUpdateProof(info(ours)); !ok || err != nil {
		t.Fatalf("filecoin-ffi rejects cuzk's update proof: %v %v", ok, err)
	}
	pathProof, err := cuzkffi.SectorUpdate.GenerateUpdateProof(up, key.sealedCID, newSealed, newUnsealed, replica, replicaCache, key.sealedPath, key.cacheDir)
	if err != nil {
		t.Fatalf("cuzk path-based update proof: %v", err)
	}
	if ok, err := filffi.SectorUpdate.VerifyUpdateProof(info(pathProof)); !ok || err != nil {
		t.Fatalf("filecoin-ffi rejects cuzk's path-based update proof: %v %v", ok, err)
	}
	theirs, err := filffi.SectorUpdate.GenerateUpdateProofWithVanilla(up, key.sealedCID, newSealed, newUnsealed, vanilla)
	if err != nil {
		t.Fatal(err)
	}
	swapped := info(theirs)
	swapped.OldSealedSectorCID, swapped.NewSealedSectorCID = swapped.NewSealedSectorCID, swapped.OldSealedSectorCID
	cases := []struct {
		name string
		info proof.ReplicaUpdateInfo
		want bool
	}{
		{"valid", info(theirs), true},
		{"tampered", info(tamper(theirs)), false},
		{"truncated", info(theirs[:len(theirs)-1]), false},
		{"old and new swapped", swapped, false},
	}
	for _, c := range cases {
		in := c.info
		agree(t, "VerifyUpdateProof "+c.name, c.want,
			func() (bool, error) { return filffi.SectorUpdate.VerifyUpdateProof(in) },
			func() (bool, error) { return cuzkffi.SectorUpdate.VerifyUpdateProof(in) })
	}
	t.Logf("SnapDeals: cuzk's update proofs (from vanilla proofs and from the sector files) verified by filecoin-ffi, filecoin-ffi's by cuzk")
}
