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

// Every running pod keeps its PodActor's podContext: 80 bytes is its size
// class (one field for the parent's entry or AfterFunc's stop).
func TestPodContextSize(t *testing.T) {
	if n := unsafe.Sizeof(podContext{}); n > 80 {
		t.Fatalf("podContext is %d bytes, want at most 80", n)
	}
}
