package lifecycle_test

import (
	"fmt"
	"regexp"
	"time"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// formatEvent prints an event as "seq Kind field=value ...", with times
// relative to t0. Listing epochs are left out: the transcripts number
// listings themselves (observe, observe stale), and the epochs would only
// repeat that count.
func formatEvent(env *pb.Envelope, t0 time.Time) string {
	s := fmt.Sprintf("%d %s", env.GetSeq(), env.GetEvent().Name())
	if d := epochField.ReplaceAllString(env.GetEvent().Describe(t0), ""); d != "" {
		s += " " + d
	}
	return s
}

var epochField = regexp.MustCompile(` ?\bepoch=\d+`)

func rel(ns int64, t0 time.Time) string {
	return "+" + time.Unix(0, ns).Sub(t0).String()
}
