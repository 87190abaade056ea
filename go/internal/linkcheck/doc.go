// Package linkcheck is `make link-test`'s test binary: cuzk and the real filecoin-ffi
// (libfilcrypto.a, built from source by scripts/build-filecoin-ffi.sh) linked into one Go
// program, once with cuzk's shared library and once with its static library (build tag
// cuzk_static), each run calling into both libraries.
//
// It is a module of its own so that the cuzk Go module does not depend on filecoin-ffi: its
// go.mod replaces filecoin-ffi with ./filecoin-ffi, a link scripts/link-test.sh makes to the
// built copy (filecoin-ffi is built, not fetched: its Go package needs libfilcrypto.a beside it).
package linkcheck
