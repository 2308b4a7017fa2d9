package faults

import (
	"hash/fnv"
	"math/rand/v2"
)

// Every decision has its own random source, derived from the seed, a key
// naming what is decided ("RunPodSandbox", "restart", "events") and a
// counter (the method's call number, an event's number on its stream): the
// n-th call of a method gets the same faults in every run with the same
// seed, however the calls of other methods interleave with it.

// draw returns the random source of decision n under key.
func draw(seed uint64, key string, n uint64) *rand.Rand {
	h := hashString(key)
	return rand.New(rand.NewPCG(mix64(seed^h), mix64(n^rotl(h, 32)^mix64(seed))))
}

// SubSeed derives an independent seed for a named part of a run (one
// simulated node's runtime, say) from the run's seed.
func SubSeed(seed uint64, name string) uint64 { return mix64(seed ^ hashString(name)) }

func hashString(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

func rotl(x uint64, k uint) uint64 { return x<<k | x>>(64-k) }

// mix64 is SplitMix64's finaliser: nearby inputs give unrelated outputs.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
