package upstream

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// Nobody is the user (and group) the simulated runtimes and the kubelet
// run as.
const Nobody = 65534

// MkdirNobody creates dir (and its parents) and gives it to Nobody.
func MkdirNobody(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	ChownNobody(tb, dir)
}

// ChownNobody gives dir and everything below it to Nobody.
func ChownNobody(tb testing.TB, dir string) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, Nobody, Nobody)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// FreePort is a free TCP port on 127.0.0.1.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
