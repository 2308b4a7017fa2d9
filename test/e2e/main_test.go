// Package e2e runs the actorlet binary against `actorlet sim-runtime` over a
// real unix socket, as a user would.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binary is the actorlet binary built for this test run.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "actorlet-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "actorlet")
	build := exec.Command("go", "build", "-o", binary, "github.com/actorlet/actorlet/cmd/actorlet")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build actorlet:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
