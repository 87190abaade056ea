package cuzk

import (
	"errors"
	"fmt"
	"testing"
)

func TestFaultySectorsAreReadFromTheError(t *testing.T) {
	err := fmt.Errorf("window: %w", &Error{Code: CodeFaultySectors, Message: "faulty sectors [3, 17]: their vanilla proofs do not verify"})
	if !errors.Is(err, ErrFaultySectors) {
		t.Fatal("errors.Is(err, ErrFaultySectors) is false")
	}
	got := FaultySectors(err)
	if len(got) != 2 || got[0] != 3 || got[1] != 17 {
		t.Fatalf("FaultySectors = %v, want [3 17]", got)
	}
	if FaultySectors(&Error{Code: CodeProofFailed, Message: "faulty sectors [1]"}) != nil {
		t.Fatal("a ProofFailed error names faulty sectors")
	}
	if FaultySectors(errors.New("faulty sectors [1]")) != nil {
		t.Fatal("a foreign error names faulty sectors")
	}
}
