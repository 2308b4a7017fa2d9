package lifecycle_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// driverHarness runs one Driver transcript: the Driver, the journal it made
// durable, the effects it handed out and not yet reported, and a clock.
type driverHarness struct {
	epoch   uint64 // as harness.epoch
	cfg     lifecycle.Config
	retry   lifecycle.Retry
	drv     *lifecycle.Driver
	journal []*pb.Envelope
	now     time.Time
	// running: the effects handed out (Work.Run) whose outcome is due, by key.
	running map[string]lifecycle.Effect
	// diskFull: appends fail (and write nothing).
	diskFull bool
}

var errDiskFull = errors.New("no space left on device")

func newDriverHarness() *driverHarness {
	h := &driverHarness{cfg: lifecycle.DefaultConfig(), now: t0, running: map[string]lifecycle.Effect{},
		retry: lifecycle.Retry{Min: 100 * time.Millisecond, Max: 10 * time.Second, Snapshot: 8}}
	h.drv = lifecycle.NewDriver(h.cfg, h.retry, lifecycle.NewState("uid-1"))
	return h
}

// TestDriverTranscripts runs the scripts in test/testdata/driver: the
// executor's rules (what runs when, retries, back-offs, listings, fresh
// creations, crashes between any two steps). Rewrite the expected output
// with: go test ./actors/lifecycle -run DriverTranscripts -rewrite
func TestDriverTranscripts(t *testing.T) {
	datadriven.Walk(t, "../../test/testdata/driver", func(t *testing.T, path string) {
		h := newDriverHarness()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := h.run(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

func (h *driverHarness) run(d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "add-pod":
		pod := &corev1.Pod{}
		if err := yaml.UnmarshalStrict([]byte(d.Input), pod); err != nil {
			return "", err
		}
		pod.UID = "uid-1"
		b, err := jsonMarshal(pod)
		if err != nil {
			return "", err
		}
		return h.step(&pb.PodDesired{PodJson: b, Source: "file"}), nil
	case "remove-pod":
		return h.step(&pb.PodUndesired{Reason: "Removed"}), nil
	case "observe":
		obs, err := parseListing(d, h.now, &h.epoch)
		if err != nil {
			return "", err
		}
		return h.step(obs), nil
	case "tick":
		if len(d.CmdArgs) > 0 {
			dur, err := time.ParseDuration(d.CmdArgs[0].Key)
			if err != nil {
				return "", err
			}
			h.now = h.now.Add(dur)
		}
		return h.step(&pb.Tick{}), nil
	case "timer":
		// The pod's timer fires: a Tick.
		h.drv.TimerFired()
		return h.step(&pb.Tick{}), nil
	case "done", "fail":
		// done key=K [id=.. ip=.. ref=..]: the effect K succeeded;
		// fail key=K [transient] [reason=..]: it failed.
		res, transient, err := parseResult(d, d.Cmd == "fail")
		if err != nil {
			return "", err
		}
		e, ok := h.running[res.Key]
		if !ok {
			return "", fmt.Errorf("effect %s is not running", res.Key)
		}
		res.Epoch = h.epoch
		delete(h.running, res.Key)
		if res.Failed {
			err = errors.New("failed: " + res.Reason)
		}
		rd, retryAfter := h.drv.Done(e, res, err, transient, h.now)
		out := h.advance(rd)
		if retryAfter > 0 {
			out = "> retry-after " + retryAfter.String() + "\n" + out
		}
		return orOK(out), nil
	case "cancel":
		// The shell stopped while effect key was in flight.
		var key string
		d.ScanArgs(nil, "key", &key)
		e, ok := h.running[key]
		if !ok {
			return "", fmt.Errorf("effect %s is not running", key)
		}
		delete(h.running, key)
		h.drv.Cancelled(e)
		return "ok\n", nil
	case "listed":
		// listed ok | listed failed: the listing the Driver asked for ended.
		ok := d.HasArg("ok")
		after := h.drv.Listed(ok)
		if !ok {
			return "> list-again-after " + after.String() + "\n", nil
		}
		return "ok\n", nil
	case "request-list":
		return fmt.Sprintf("%v\n", h.drv.RequestList()), nil
	case "disk":
		// disk full | disk ok
		h.diskFull = d.HasArg("full")
		return "ok\n", nil
	case "crash":
		// A kill -9: the Driver and the effects in flight are lost; a new
		// Driver starts from the journal. Their outcomes never arrive.
		st := lifecycle.NewState("uid-1")
		for _, env := range h.journal {
			lifecycle.Apply(st, env)
		}
		h.drv = lifecycle.NewDriver(h.cfg, h.retry, st)
		clear(h.running)
		return "ok\n", nil
	case "running":
		if len(h.running) == 0 {
			return "none\n", nil
		}
		var keys []string
		for k := range h.running {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return strings.Join(keys, "\n") + "\n", nil
	default:
		return "", fmt.Errorf("unknown command %q", d.Cmd)
	}
}

func (h *driverHarness) step(in lifecycle.Input) string {
	return orOK(h.advance(h.drv.Step(in, h.now)))
}

// advance makes rd durable (unless the disk is full), advances the Driver
// and prints the events and the work.
func (h *driverHarness) advance(rd lifecycle.Ready) string {
	var b strings.Builder
	var err error
	if len(rd.Events) > 0 {
		if h.diskFull {
			err = errDiskFull
			fmt.Fprintf(&b, "append failed: %d events dropped\n", len(rd.Events))
		} else {
			h.journal = append(h.journal, rd.Events...)
			for _, env := range rd.Events {
				b.WriteString(formatEvent(env, t0))
				b.WriteByte('\n')
			}
		}
	}
	w := h.drv.Advance(rd, err)
	if w.Finish {
		b.WriteString("> finish\n")
	}
	if w.Snapshot {
		b.WriteString("> snapshot\n")
		h.drv.Snapshotted()
	}
	if !w.TimerAt.IsZero() {
		b.WriteString("> timer at=" + rel(w.TimerAt.UnixNano(), t0) + "\n")
	}
	for _, r := range w.Run {
		s := "> run " + fmt.Sprint(r.Effect)
		if r.Fresh {
			s += " (fresh)"
		}
		if r.Retry {
			s += " (retry)"
		}
		b.WriteString(s + "\n")
		h.running[r.Effect.Key()] = r.Effect
	}
	if w.List {
		b.WriteString("> list\n")
	}
	return b.String()
}

func orOK(s string) string {
	if s == "" {
		return "ok\n"
	}
	return s
}
