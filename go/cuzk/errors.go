package cuzk

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Code is the result code of a cuzk call (CUZK_CODE_* in cuzk.h).
type Code int32

// Result codes; they match include/cuzk.h.
const (
	CodeOK           Code = 0
	CodeNullArgument Code = 1
	CodeInvalidInput Code = 2
	CodeProofFailed  Code = 3
	CodeCancelled    Code = 4
	CodeClosed       Code = 5
	CodeTimeout      Code = 6
	CodeUnknownJob   Code = 7
	CodeTooLarge     Code = 8
	CodePanic        Code = 9
	// CodeFaultySectors: WindowPoSt vanilla proofs of some sectors do not verify; nothing
	// was proved. FaultySectors(err) lists them.
	CodeFaultySectors Code = 10
)

// Error is an error reported by cuzk: a code and the message from Rust.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("cuzk: %s (code %d)", e.Message, e.Code) }

// Is makes errors.Is(err, ErrCancelled) and friends work: errors match by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinel errors to test with errors.Is.
var (
	ErrNullArgument  = &Error{Code: CodeNullArgument, Message: "null argument"}
	ErrInvalidInput  = &Error{Code: CodeInvalidInput, Message: "invalid input"}
	ErrProofFailed   = &Error{Code: CodeProofFailed, Message: "proof failed"}
	ErrCancelled     = &Error{Code: CodeCancelled, Message: "cancelled"}
	ErrClosed        = &Error{Code: CodeClosed, Message: "engine closed"}
	ErrTimeout       = &Error{Code: CodeTimeout, Message: "timeout"}
	ErrUnknownJob    = &Error{Code: CodeUnknownJob, Message: "unknown job"}
	ErrTooLarge      = &Error{Code: CodeTooLarge, Message: "too large"}
	ErrPanic         = &Error{Code: CodePanic, Message: "internal panic"}
	ErrFaultySectors = &Error{Code: CodeFaultySectors, Message: "faulty sectors"}
)

// FaultySectors returns the sector numbers a CodeFaultySectors error names (the message
// starts with "faulty sectors [n, m, ...]"), or nil for any other error.
func FaultySectors(err error) []uint64 {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeFaultySectors {
		return nil
	}
	open := strings.IndexByte(e.Message, '[')
	end := strings.IndexByte(e.Message, ']')
	if open < 0 || end < open {
		return nil
	}
	var sectors []uint64
	for _, field := range strings.Split(e.Message[open+1:end], ",") {
		if n, err := strconv.ParseUint(strings.TrimSpace(field), 10, 64); err == nil {
			sectors = append(sectors, n)
		}
	}
	return sectors
}
