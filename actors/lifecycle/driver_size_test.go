package lifecycle

import (
	"testing"
	"unsafe"
)

// Every running pod keeps its Driver: the Config and back-off, the same for
// all of a node's pods, are shared by pointer (NewSharedDriver), not copied
// into each. 112 bytes is its size class (it was 192).
func TestDriverSize(t *testing.T) {
	if n := unsafe.Sizeof(Driver{}); n > 112 {
		t.Fatalf("Driver is %d bytes, want at most 112", n)
	}
	sh := &Shared{Config: DefaultConfig()}
	if a, b := NewSharedDriver(sh, NewState("a")), NewSharedDriver(sh, NewState("b")); a.shared != b.shared {
		t.Fatal("two Drivers of one Shared hold copies of it")
	}
}
