package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// EnvCatFiles (a comma-separated list of absolute paths in the container)
// makes the simulated process, when it starts, write each file's contents
// to its log as `cat` would print them to stdout, so that a test sees what
// a container sees in its volumes. A path is read through the container's
// mounts (CreateContainer's mounts: the one whose container_path is the
// longest prefix of it, at its host_path), never from the host's own file
// system; a path under no mount, or a file that cannot be read, writes
// "cat: <path>: <error>" to stderr instead. Lines go to the container's
// log path in the CRI log format ("<RFC 3339 time> stdout F <line>"), with
// the runtime's clock; without a log path nothing is written.
const EnvCatFiles = "SIM_CAT_FILES"

// parseCatFiles checks SIM_CAT_FILES: absolute, clean paths.
func parseCatFiles(v string) ([]string, error) {
	var paths []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !path.IsAbs(p) || path.Clean(p) != p {
			return nil, newErr(ErrInvalidArgument, "env %s: %q is not a clean absolute path", EnvCatFiles, p)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// catFilesLocked writes the files of SIM_CAT_FILES to c's log (see
// EnvCatFiles). A log that cannot be written is the process's problem, not
// StartContainer's: it is left unwritten.
func (r *Runtime) catFilesLocked(c *container) {
	logPath := c.logPath()
	if len(c.behaviour.catFiles) == 0 || logPath == "" {
		return
	}
	mounts := c.mountsCRI()
	ts := time.Unix(0, r.now()).UTC().Format(time.RFC3339Nano)
	var out bytes.Buffer
	for _, p := range c.behaviour.catFiles {
		data, err := readThroughMounts(mounts, p)
		if err != nil {
			fmt.Fprintf(&out, "%s stderr F cat: %s: %v\n", ts, p, err)
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintf(&out, "%s stdout F %s\n", ts, sc.Text())
		}
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o750); err != nil {
		return
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(out.Bytes())
}

// readThroughMounts reads the container path p from the host path of the
// mount whose container path is p's longest prefix.
func readThroughMounts(mounts []*runtimeapi.Mount, p string) ([]byte, error) {
	var best *runtimeapi.Mount
	for _, m := range mounts {
		cp := path.Clean(m.GetContainerPath())
		if (p == cp || strings.HasPrefix(p, strings.TrimSuffix(cp, "/")+"/")) &&
			(best == nil || len(cp) > len(path.Clean(best.GetContainerPath()))) {
			best = m
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no such file or directory (no mount)")
	}
	rel := strings.TrimPrefix(p, path.Clean(best.GetContainerPath()))
	b, err := os.ReadFile(filepath.Join(best.GetHostPath(), filepath.FromSlash(rel)))
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			return nil, pe.Err
		}
		return nil, err
	}
	return b, nil
}
