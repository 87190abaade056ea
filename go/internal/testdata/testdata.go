// Package testdata loads cuzk's 2 KiB test data (made by `cuzk testdata generate`) for Go tests.
package testdata

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
)

// T is the part of T the loaders need (the demo passes its own).
type T interface {
	Helper()
	Fatal(args ...any)
}

// Post is a PoSt request's inputs.
type Post struct {
	Registered   uint64   `json:"registered"`
	Randomness   string   `json:"randomness"`
	VanillaFiles []string `json:"vanilla_files"`
	Partition    uint64   `json:"partition"`
}

// Sector is a sealed test sector.
type Sector struct {
	Registered uint64 `json:"registered"`
	Sector     uint64 `json:"sector"`
	C1File     string `json:"c1_file"`
	CommR      string `json:"comm_r"`
	CommD      string `json:"comm_d"`
}

// Manifest mirrors the Rust manifest.
type Manifest struct {
	MinerID uint64   `json:"miner_id"`
	Porep   []Sector `json:"porep"`
	Winning Post     `json:"winning"`
	Window  Post     `json:"window"`
	// WindowAll is a whole WindowPoSt over Porep's sectors plus ExtraSector (two partitions).
	WindowAll   Post   `json:"window_all"`
	ExtraSector Sector `json:"extra_sector"`
	Snap        struct {
		Registered   uint64   `json:"registered"`
		CommROld     string   `json:"comm_r_old"`
		CommRNew     string   `json:"comm_r_new"`
		CommDNew     string   `json:"comm_d_new"`
		VanillaFiles []string `json:"vanilla_files"`
	} `json:"snap"`
}

// Data is a loaded test data directory.
type Data struct {
	Dir string
	Manifest
}

// Load reads $CUZK_TESTDATA (default $CUZK_CACHE/testdata-2k, CUZK_CACHE default ~/.cache/cuzk).
func Load(t T) *Data {
	t.Helper()
	dir := os.Getenv("CUZK_TESTDATA")
	if dir == "" {
		cache := os.Getenv("CUZK_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "cuzk")
		}
		dir = filepath.Join(cache, "testdata-2k")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal("test data missing (run `make fixtures`):", err)
	}
	d := &Data{Dir: dir}
	if err := json.Unmarshal(raw, &d.Manifest); err != nil {
		t.Fatal(err)
	}
	return d
}

// File reads a file of the test data.
func (d *Data) File(t T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Files reads several files.
func (d *Data) Files(t T, names []string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = d.File(t, n)
	}
	return out
}

// Hex decodes a hex string from the manifest.
func Hex(t T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
