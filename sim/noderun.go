package sim

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// A node's run: its events in order of its own virtual clock, from the
// start to the end of Duration+Quiet, in one goroutine. What it finds (the
// checks made, violations, its digest, the faults it injected) is its own,
// so that nodes can run side by side; Sim.report adds them up.

// end is the virtual time every node's run ends at.
func (s *Sim) end() time.Time { return s.start.Add(s.opts.Duration + s.opts.Quiet) }

// due returns when the node's next event is due, or false if its run is
// over: it reached the end (then the final checks run, once), failed,
// found a violation (unless KeepGoing), or ran StopAtStep steps.
func (n *Node) due() (time.Time, bool) {
	if n.ended || n.failure != nil || (len(n.violations) > 0 && !n.s.opts.KeepGoing) ||
		(n.s.opts.StopAtStep > 0 && n.step >= n.s.opts.StopAtStep) {
		return time.Time{}, false
	}
	at, ok := n.clock.peek()
	if ok && at.Before(n.s.end()) {
		return at, true
	}
	n.ended, n.complete = true, true
	if len(n.violations) == 0 || n.s.opts.KeepGoing {
		n.finalChecks()
	}
	return time.Time{}, false
}

// stepOnce runs the node's next event, then takes the runtime events it
// caused.
func (n *Node) stepOnce() {
	e := n.clock.next()
	n.step++
	e.fn()
	n.pumpEvents()
}

// runAll steps the node until its run is over or ctx is done.
func (n *Node) runAll(ctx context.Context) {
	for _, ok := n.due(); ok; _, ok = n.due() {
		n.stepOnce()
		if n.step%4096 == 0 && ctx.Err() != nil {
			return
		}
	}
}

// faultsOn: faults, crashes and workload changes happen in the first
// Duration of the run, not in the quiet time after it.
func (n *Node) faultsOn() bool { return n.clock.Now().Before(n.s.start.Add(n.s.opts.Duration)) }

func (n *Node) crashesOn() bool { return n.faultsOn() && n.s.opts.CrashEvery > 0 }

func (n *Node) countFault(kind string) { n.faultCounts[kind]++ }

// violate records a violation found now.
func (n *Node) violate(uid, what string) {
	n.violations = append(n.violations, Violation{
		Step: n.step, At: n.clock.Now().Sub(n.s.start).String(), Node: n.name, Pod: uid, What: what,
	})
}

// fail records an internal failure: the node's run stops, and Run fails.
func (n *Node) fail(uid, what string) {
	if n.failure == nil {
		n.failure = fmt.Errorf("sim: node %s, step %d, pod %q: %s", n.name, n.step, uid, what)
	}
}

// digestAppend folds one journal append into the node's digest: the pod
// and every envelope, deterministically encoded.
func (n *Node) digestAppend(uid string, events []*pb.Envelope) {
	var b [8]byte
	n.digest.Write([]byte(uid))
	for _, env := range events {
		n.events++
		var err error
		n.buf, err = proto.MarshalOptions{Deterministic: true}.MarshalAppend(n.buf[:0], env)
		if err != nil {
			panic(err) // an envelope that was just journaled encodes
		}
		binary.BigEndian.PutUint64(b[:], uint64(len(n.buf)))
		n.digest.Write(b[:])
		n.digest.Write(n.buf)
	}
}

// skipped: the node is not run (Options.OnlyNode names another).
func (n *Node) skipped() bool { return n.s.opts.OnlyNode != "" && n.name != n.s.opts.OnlyNode }

// Digest is the hex SHA-256 over every event the node journaled so far, in
// order.
func (n *Node) Digest() string { return hex.EncodeToString(n.digest.Sum(nil)) }

// Clock is the node's virtual clock.
func (n *Node) Clock() *Clock { return n.clock }

// Steps is the number of steps the node ran.
func (n *Node) Steps() uint64 { return n.step }
