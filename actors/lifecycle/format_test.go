package lifecycle_test

import (
	"fmt"
	"time"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// formatEvent prints an event as "seq Kind field=value ...", with times
// relative to t0.
func formatEvent(env *pb.Envelope, t0 time.Time) string {
	s := fmt.Sprintf("%d %s", env.GetSeq(), env.GetEvent().Name())
	if d := env.GetEvent().Describe(t0); d != "" {
		s += " " + d
	}
	return s
}

func rel(ns int64, t0 time.Time) string {
	return "+" + time.Unix(0, ns).Sub(t0).String()
}
