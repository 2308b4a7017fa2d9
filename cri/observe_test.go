package cri

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

type callLog struct {
	mu    sync.Mutex
	calls []string
	kinds []Kind
}

func (c *callLog) CallDone(op string, _ time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, op)
	c.kinds = append(c.kinds, KindOf(err))
}

// A runtime that hangs is reported while it hangs, and every call is told
// to the Observer with its outcome.
func TestHungCallIsLoggedAndObserved(t *testing.T) {
	f := newFakeRuntime()
	f.block["StartContainer"] = true
	core, logs := observer.New(zapcore.InfoLevel)
	obs := &callLog{}
	c := dialFake(t, f, Options{Timeout: 300 * time.Millisecond, SlowCall: 20 * time.Millisecond, Logger: zap.New(core), Observer: obs})

	if _, err := c.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := c.StartContainer(context.Background(), "c1")
	if KindOf(err) != Timeout {
		t.Fatalf("StartContainer: %v, want a timeout", err)
	}
	hung := logs.FilterMessage("the container runtime has not answered").FilterField(zap.String("op", "StartContainer")).AllUntimed()
	if len(hung) != 1 || hung[0].Level != zapcore.WarnLevel || hung[0].ContextMap()["op"] != "StartContainer" || hung[0].ContextMap()["id"] != "c1" {
		t.Fatalf("hang warnings: %v", hung)
	}
	if n := logs.FilterMessage("the container runtime answered after hanging").FilterField(zap.String("op", "StartContainer")).Len(); n != 1 {
		t.Fatalf("%d lines for the end of the hang", n)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.calls) != 2 || obs.calls[0] != "Version" || obs.kinds[0] != OK || obs.calls[1] != "StartContainer" || obs.kinds[1] != Timeout {
		t.Fatalf("observed %v %v", obs.calls, obs.kinds)
	}
}
