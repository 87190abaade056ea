// Package cuzk is the Go face of the cuzk proving engine: open an engine once per process,
// submit proofs (PoRep C2, WinningPoSt, WindowPoSt partitions, SnapDeals), await them with a
// context, cancel, read status, close.
//
// Linking: cgo links the shared library cargo builds (`make go-lib` links go/lib/libcuzk.so
// to target/release/libcuzk.so and go/include to ../include). For a static build, link
// go/lib/libcuzk.a instead with `CGO_LDFLAGS="-l:libcuzk.a -ldl -lm -lpthread"`.
package cuzk

/*
#cgo CFLAGS: -I${SRCDIR}/../../include
#cgo LDFLAGS: -L${SRCDIR}/../lib -lcuzk -Wl,-rpath,${SRCDIR}/../lib
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"
