package logrotate

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// compress gzips the rotated file at path to path+".gz" and removes path. The data goes to
// path+".tmp" first, which is synced before it is renamed, so a crash leaves either the
// original or a complete .gz (possibly both; the next pass removes the original then).
func compress(path string) (err error) {
	src, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("compress %q: %w", path, err)
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return fmt.Errorf("compress %q: %w", path, err)
	}
	tmp := path + tmpSuffix
	dst, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return fmt.Errorf("compress %q: create temporary file: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = dst.Close()
			_ = os.Remove(tmp)
		}
	}()
	zw := gzip.NewWriter(dst)
	zw.Name = filepath.Base(path)
	zw.ModTime = info.ModTime()
	if _, err := io.Copy(zw, src); err != nil {
		return fmt.Errorf("compress %q to %q: %w", path, tmp, err)
	}
	if err := errors.Join(zw.Close(), dst.Sync()); err != nil {
		return fmt.Errorf("compress %q to %q: %w", path, tmp, err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("compress %q to %q: %w", path, tmp, err)
	}
	gz := path + compressSuffix
	if err := os.Rename(tmp, gz); err != nil {
		return fmt.Errorf("compress %q: rename %q to %q: %w", path, tmp, gz, err)
	}
	if err := os.Remove(path); err != nil {
		// The .gz is complete: the next pass removes path as a leftover.
		return fmt.Errorf("compress %q: remove original: %w", path, err)
	}
	return nil
}
