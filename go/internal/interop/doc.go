// Package interop links the real filecoin-ffi (v1.36.1, built from source by
// scripts/build-filecoin-ffi.sh) and cuzk's go/ffi into one binary and checks that they are
// interchangeable: sectors sealed with filecoin-ffi are proved by cuzk and verified by
// filecoin-ffi, and the reverse, for every proof kind and version at 2 KiB, and every verify
// function gives filecoin-ffi's verdict. Its own module (filecoin-ffi is replaced by a local
// build); run it with `make interop-test`.
package interop
