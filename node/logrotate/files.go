package logrotate

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// TimestampFormat is the layout (see time.Format) of the timestamp in rotated file names,
// <log>.<timestamp>[.gz]; it is the kubelet's, and sorts names oldest first.
const TimestampFormat = "20060102-150405"

const (
	// compressSuffix ends the name of a compressed rotated file.
	compressSuffix = ".gz"
	// tmpSuffix ends the name of a file being compressed.
	tmpSuffix = ".tmp"
)

// fileKind says what a file next to a current log is.
type fileKind int

const (
	// plain is a rotated file not yet compressed: <log>.<ts>.
	plain fileKind = iota
	// compressed is a gzipped rotated file: <log>.<ts>.gz.
	compressed
	// temporary is a compression in progress, or left by an interrupted one: <log>.<ts>.tmp
	// (or <log>.<ts>.gz.tmp).
	temporary
)

// rotatedFile is a file that rotation made next to a current log.
type rotatedFile struct {
	path  string
	stamp string // the timestamp in the name, in TimestampFormat
	kind  fileKind
}

// parseRotated recognises name, a file name in the directory of the current log named base,
// as a rotated file of that log.
func parseRotated(base, name string) (stamp string, kind fileKind, ok bool) {
	rest, ok := strings.CutPrefix(name, base+".")
	if !ok {
		return "", 0, false
	}
	kind = plain
	if r, ok := strings.CutSuffix(rest, tmpSuffix); ok {
		rest, kind = r, temporary
	}
	if r, ok := strings.CutSuffix(rest, compressSuffix); ok {
		rest = r
		if kind == plain {
			kind = compressed
		}
	}
	if _, err := time.Parse(TimestampFormat, rest); err != nil {
		return "", 0, false
	}
	return rest, kind, true
}

// listRotated returns every rotated file of the current log at log, temporary ones included,
// oldest first (by timestamp, then name).
func listRotated(log string) ([]rotatedFile, error) {
	dir, base := filepath.Split(log)
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		return nil, fmt.Errorf("list rotated files of %q: %w", log, err)
	}
	var files []rotatedFile
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if stamp, kind, ok := parseRotated(base, e.Name()); ok {
			files = append(files, rotatedFile{path: filepath.Join(dir, e.Name()), stamp: stamp, kind: kind})
		}
	}
	slices.SortFunc(files, func(a, b rotatedFile) int {
		return cmp.Or(cmp.Compare(a.stamp, b.stamp), cmp.Compare(a.path, b.path))
	})
	return files, nil
}

// splitLeftovers splits files into those in use and the leftovers of interrupted passes:
// temporary files, and plain files whose compressed copy exists. Order is kept.
func splitLeftovers(files []rotatedFile) (inUse, leftovers []rotatedFile) {
	gz := make(map[string]bool)
	for _, f := range files {
		if f.kind == compressed {
			gz[f.stamp] = true
		}
	}
	for _, f := range files {
		if f.kind == temporary || (f.kind == plain && gz[f.stamp]) {
			leftovers = append(leftovers, f)
		} else {
			inUse = append(inUse, f)
		}
	}
	return inUse, leftovers
}

// RotatedFiles returns the full paths of the rotated files of the container log at logPath,
// oldest first, not counting logPath itself: <logPath>.<ts>.gz files and uncompressed
// <logPath>.<ts> files (normally only the newest). Temporary files and leftovers of
// interrupted rotations are not listed. A reader of a container's whole log reads these, then logPath. A missing
// directory is an error matching fs.ErrNotExist.
func RotatedFiles(logPath string) ([]string, error) {
	files, err := listRotated(logPath)
	if err != nil {
		return nil, err
	}
	inUse, _ := splitLeftovers(files)
	paths := make([]string, len(inUse))
	for i, f := range inUse {
		paths[i] = f.path
	}
	return paths, nil
}
