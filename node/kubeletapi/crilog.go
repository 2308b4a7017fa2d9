package kubeletapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A CRI log file holds one record a line:
//
//	<RFC3339Nano time> <stdout|stderr> <P|F>[:<more tags>] <text>
//
// A P (partial) record is a piece of a long line, continued by the next
// records of the same stream up to an F (full) one. A "line" below is such
// a logical line: the text of its records joined, ending with a newline.

// logRecord is one parsed record; text aliases the line it came from.
type logRecord struct {
	ts      time.Time
	stderr  bool
	partial bool
	text    []byte
}

// parseCRILine parses one record, without its newline.
func parseCRILine(line []byte) (logRecord, error) {
	var rec logRecord
	field := func(name string) ([]byte, error) {
		before, after, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("CRI log record has no %s: %q", name, truncate(line))
		}
		line = after
		return before, nil
	}
	ts, err := field("stream")
	if err != nil {
		return rec, err
	}
	if rec.ts, err = time.Parse(time.RFC3339Nano, string(ts)); err != nil {
		return rec, fmt.Errorf("CRI log record has a bad time: %w", err)
	}
	stream, err := field("tag")
	if err != nil {
		return rec, err
	}
	switch runtimeapi.LogStreamType(stream) {
	case runtimeapi.Stdout:
	case runtimeapi.Stderr:
		rec.stderr = true
	default:
		return rec, fmt.Errorf("CRI log record has an unknown stream %q", truncate(stream))
	}
	tags, text, _ := bytes.Cut(line, []byte{' '}) // an empty text may lack its space
	tag, _, _ := bytes.Cut(tags, []byte(runtimeapi.LogTagDelimiter))
	switch runtimeapi.LogTag(tag) {
	case runtimeapi.LogTagPartial:
		rec.partial = true
	case runtimeapi.LogTagFull:
	default:
		return rec, fmt.Errorf("CRI log record has an unknown tag %q", truncate(tag))
	}
	rec.text = text
	return rec, nil
}

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// logOptions select what of a log to write, as the query of
// /containerLogs does.
type logOptions struct {
	follow     bool
	timestamps bool
	tailLines  int64     // the last lines only; negative means all
	since      time.Time // records before are skipped; zero means all
	limitBytes int64     // stop after writing this much; 0 means no limit
}

// tailStart returns the offset in f of the start of its last n lines (or
// of its end for n 0), looking only at complete records; f is left at an
// unspecified offset.
func tailStart(f io.ReadSeeker, n int64) (int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	// starts holds the offsets of the last n line starts, circularly.
	var starts []int64
	next := 0
	var count int64
	record := func(off int64) {
		if int64(len(starts)) < n {
			starts = append(starts, off)
		} else if n > 0 {
			starts[next] = off
			next = (next + 1) % len(starts)
		}
		count++
	}
	br := bufio.NewReader(f)
	var off int64
	lineStart := true
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A record longer than the buffer: read on to its end.
			rest, err2 := br.ReadBytes('\n')
			line = append(append([]byte(nil), line...), rest...)
			err = err2
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, err
		}
		rec, perr := parseCRILine(line[:len(line)-1])
		if perr == nil { // records that do not parse are not written: not lines
			if lineStart {
				record(off)
			}
			lineStart = !rec.partial
		}
		off += int64(len(line))
	}
	if n == 0 {
		return off, nil
	}
	if count <= n {
		return 0, nil
	}
	return starts[next], nil
}

// logWriter writes the records of a log to the client, as opts select.
type logWriter struct {
	w       io.Writer
	opts    logOptions
	written int64
	// midLine is, per stream (stdout, stderr), whether the last record
	// written was partial: the next one continues its line and gets no
	// timestamp.
	midLine [2]bool
}

// write writes one record; done means the byte limit was reached.
func (lw *logWriter) write(rec logRecord) (done bool, err error) {
	if !lw.opts.since.IsZero() && rec.ts.Before(lw.opts.since) {
		return false, nil
	}
	stream := 0
	if rec.stderr {
		stream = 1
	}
	var buf []byte
	if lw.opts.timestamps && !lw.midLine[stream] {
		buf = append(rec.ts.AppendFormat(buf, time.RFC3339Nano), ' ')
	}
	buf = append(buf, rec.text...)
	if !rec.partial {
		buf = append(buf, '\n')
	}
	lw.midLine[stream] = rec.partial
	if lw.opts.limitBytes > 0 {
		if rest := lw.opts.limitBytes - lw.written; int64(len(buf)) >= rest {
			buf, done = buf[:rest], true
		}
	}
	n, err := lw.w.Write(buf)
	lw.written += int64(n)
	return done, err
}

// logFollower is what readLog needs to follow a file.
type logFollower struct {
	path    string
	poll    time.Duration
	flush   func()
	running func(ctx context.Context) (bool, error) // nil: until ctx ends
	log     *zap.Logger
}

// readLog writes the records of f (the log file at fl.path) to w as opts
// select. Records that do not parse are skipped. Without opts.follow it
// returns at the end of the file, ignoring an incomplete last record (the
// runtime is writing it). With follow it then waits for more, checking
// every fl.poll, until ctx ends or the container is no longer running and
// its log is read; if the runtime rotates the file (renames it and writes
// a new one at the path), the rest of the old file is read, then the new
// one from its start. readLog takes over f and closes it.
func readLog(ctx context.Context, f *os.File, w io.Writer, opts logOptions, fl logFollower) error {
	defer func() { _ = f.Close() }()
	if opts.tailLines >= 0 {
		start, err := tailStart(f, opts.tailLines)
		if err != nil {
			return fmt.Errorf("finding the last %d lines of %s: %w", opts.tailLines, fl.path, err)
		}
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			return fmt.Errorf("seeking in %s: %w", fl.path, err)
		}
	}
	lw := &logWriter{w: w, opts: opts}
	br := bufio.NewReader(f)
	var pending []byte // an incomplete record, read so far
	lastPass := false  // the container has stopped: read to the end once more
	rotated := false   // the path is a new file: read the old to the end first
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		line, err := br.ReadBytes('\n')
		if err == nil {
			if len(pending) > 0 {
				line = append(pending, line...)
				pending = nil
			}
			rec, perr := parseCRILine(line[:len(line)-1])
			if perr != nil {
				fl.log.Debug("skipping a log record", zap.String("path", fl.path), zap.Error(perr))
				continue
			}
			done, werr := lw.write(rec)
			if werr != nil {
				return fmt.Errorf("writing the log of %s: %w", fl.path, werr)
			}
			if done {
				return nil
			}
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading %s: %w", fl.path, err)
		}
		pending = append(pending, line...)
		// At the end of the file.
		if !opts.follow || lastPass {
			return nil
		}
		if rotated {
			nf, err := os.Open(fl.path)
			if err != nil {
				return fmt.Errorf("opening rotated log %s: %w", fl.path, err)
			}
			_ = f.Close()
			f, rotated, pending = nf, false, nil
			br.Reset(f)
			continue
		}
		if fl.flush != nil {
			fl.flush()
		}
		if isRotated(f, fl.path) {
			rotated = true
			continue
		}
		if fl.running != nil {
			if running, err := fl.running(ctx); err != nil {
				fl.log.Debug("checking whether the container runs", zap.String("path", fl.path), zap.Error(err))
			} else if !running {
				lastPass = true
				continue
			}
		}
		if timer == nil {
			timer = time.NewTimer(fl.poll)
		} else {
			timer.Reset(fl.poll)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
	}
}

// isRotated tells whether path now names another file than f.
func isRotated(f *os.File, path string) bool {
	cur, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	if err != nil {
		return false // renamed, the new one not there yet
	}
	return !os.SameFile(cur, now)
}
