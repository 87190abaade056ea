package cuzk

/*
#include "cuzk.h"
*/
import "C"

// LiveOutputs is the number of owned outputs (error messages, JSON strings, proof buffers,
// lists) the library has handed out and that were not yet freed. Every wrapper in this
// package frees what it receives, so after any sequence of calls with nothing in flight the
// number is back where it was: cuzk-leakcheck (make leak-test) checks that.
func LiveOutputs() uint64 {
	return uint64(C.cuzk_live_outputs())
}
