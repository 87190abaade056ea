//go:build cuzk_static

package cuzk

// The static library (libcuzk.a as installed by scripts/install-lib.sh: every symbol but cuzk_*
// local), selected with the build tag cuzk_static.

// #cgo pkg-config: cuzk-static
import "C"
