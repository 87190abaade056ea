//go:build !cuzk_static

package cuzk

// The shared library (libcuzk.so.N): it exports only cuzk_*, so it links beside anything.

// #cgo pkg-config: cuzk
import "C"
