// Package cuzk is the Go face of the cuzk proving engine: open an engine once per process,
// submit proofs (PoRep C2, WinningPoSt, WindowPoSt partitions, SnapDeals), await them with a
// context, cancel, read status, close.
//
// Linking: the package includes its own copy of the C header (cuzk.h, kept identical to the
// repository's include/cuzk.h by the build and a test) and finds the library through
// pkg-config: package cuzk (link_shared.go: libcuzk.so.N, the default) or, with the build tag
// cuzk_static, package cuzk-static (link_static.go: libcuzk.a, whose only global symbols are
// cuzk_*, so it links beside filecoin-ffi's libfilcrypto.a). `make install PREFIX=...` installs
// the libraries, the header and both .pc files; `make go-lib` writes .pc files for the cargo
// build in this repository to go/lib (PKG_CONFIG_PATH=go/lib). See docs/linking.md.
package cuzk

/*
#cgo CPPFLAGS: -I${SRCDIR}
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"
