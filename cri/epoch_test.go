package cri

import "testing"

// Every epoch of a process is above every epoch of the process before it,
// and a listing's epoch is above every outcome stamped before it began.
func TestEpochsOrder(t *testing.T) {
	first := NewEpochs(1)
	for range 1000 {
		first.Next()
	}
	stamped := first.Now()
	if l := first.Next(); l <= stamped {
		t.Fatalf("listing %d not above the outcome stamped %d before it", l, stamped)
	}
	second := NewEpochs(2)
	if second.Now() <= first.Now() || second.Next() <= first.Now() {
		t.Fatalf("incarnation 2's epochs (%d) not above incarnation 1's (%d)", second.Now(), first.Now())
	}
	var none *Epochs
	if none.Next() != 0 || none.Now() != 0 {
		t.Fatal("nil Epochs number something")
	}
}
