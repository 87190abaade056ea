//go:build linkcheck

// Package linkcheck links cuzk's shared library and a second Rust static library with its own
// runtime and blst (a stand-in for filecoin-ffi's libfilcrypto.a) into one Go binary. Built only
// with `-tags linkcheck` by `make link-test`, which provides the archive through CGO_LDFLAGS.
package linkcheck

/*
#cgo LDFLAGS: -lfakefilcrypto -ldl -lm -lpthread
#include <stdint.h>
int fil_fake_g1_mul(uint64_t k, uint8_t *out);
*/
import "C"

import "unsafe"

// G1Mul returns the compressed k·G1 computed by the stand-in library's blst.
func G1Mul(k uint64) ([]byte, bool) {
	out := make([]byte, 48)
	rc := C.fil_fake_g1_mul(C.uint64_t(k), (*C.uint8_t)(unsafe.Pointer(&out[0])))
	return out, rc == 0
}
