package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func TestUniqueKeysKeepJSONValid(t *testing.T) {
	var buf bytes.Buffer
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	log := zap.New(newUniqueKeys(zapcore.NewCore(enc, zapcore.AddSync(&buf), zapcore.DebugLevel)))
	log = log.With(zap.String("node", "n1"))
	log.Info("serving", zap.String("node", "n1"), zap.String("address", "a"), zap.String("address", "b"))
	log.With(zap.Namespace("req"), zap.String("node", "inner")).Info("nested")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines: %q", lines)
	}
	for _, l := range lines {
		if strings.Count(l, `"node":`) != 1 && !strings.Contains(l, `"req":{"node":"inner"}`) {
			t.Errorf("duplicate key in %s", l)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	if !strings.Contains(lines[0], `"address":"a"`) || strings.Contains(lines[0], `"address":"b"`) {
		t.Errorf("the first value does not win: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"node":"n1"`) || !strings.Contains(lines[1], `"req":{"node":"inner"}`) {
		t.Errorf("namespaced key lost: %s", lines[1])
	}
}
