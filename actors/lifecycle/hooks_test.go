package lifecycle_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/journal/replay"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestHookTranscripts runs the lifecycle hook scripts in testdata/hooks,
// with the commands of TestTranscripts and two more:
//
//	hooks stages=Accepted,BeforeStart        the stages the node's hooks are asked at
//	verdict key=<RunHook key> action=Delay|Veto|Continue [after=5s] [reason=R] [msg=...]
//
// Rewrite the expected output with: go test ./actors/lifecycle -run HookTranscripts -rewrite
func TestHookTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata/hooks", func(t *testing.T, path string) {
		h := newHarness()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := h.runHooks(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
		if p := replay.Fold("uid-1", nil, h.journal); len(p.Divergences) > 0 {
			t.Errorf("journal replay found divergences in the transcript's journal: %v", p.Divergences)
		}
	})
}

func (h *harness) runHooks(d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "hooks":
		var stages []lifecycle.Stage
		for _, a := range d.CmdArgs {
			if a.Key != "stages" {
				return "", fmt.Errorf("hooks takes stages=..., not %s", a)
			}
			for _, v := range a.Vals {
				st, err := lifecycle.ParseStage(v)
				if err != nil {
					return "", err
				}
				stages = append(stages, st)
			}
		}
		h.cfg.HookStages = lifecycle.StagesOf(stages...)
		return "ok\n", nil
	case "verdict":
		res := &pb.EffectResult{}
		for _, a := range d.CmdArgs {
			v := strings.Join(a.Vals, ",")
			switch a.Key {
			case "key":
				res.Key = v
			case "action":
				res.HookAction = v
			case "after":
				dur, err := time.ParseDuration(v)
				if err != nil {
					return "", err
				}
				res.HookRetryAfterNanos = int64(dur)
			case "reason":
				res.Reason = v
			case "msg":
				res.Message = v
			default:
				return "", fmt.Errorf("unknown arg %q", a.Key)
			}
		}
		return h.decide(res), nil
	}
	return h.run(d)
}
