package actors

import (
	"testing"
	"unsafe"
)

// Every running pod keeps its podActor, so its size is per-pod memory: the
// wait for the journal (appendWait) is held by pointer, made at the first
// failed append only. 176 bytes is its size class (it was 240).
func TestPodActorSize(t *testing.T) {
	if n := unsafe.Sizeof(podActor{}); n > 176 {
		t.Fatalf("podActor is %d bytes, want at most 176 (a size class of 176 bytes)", n)
	}
}
