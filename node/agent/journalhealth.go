package agent

import (
	"fmt"
	"slices"
	"sync"

	"github.com/actorlet/actorlet/actors"
)

// journalHealth tracks the pods whose journal appends fail (disk full, EIO,
// a read-only file system, the file gone). While any does, Err names the
// journal and the failure: /healthz answers 500 with it.
type journalHealth struct {
	path    string
	mu      sync.Mutex
	failing map[string]error // pod UID -> its last append error
}

var _ actors.AppendHealth = (*journalHealth)(nil)

func newJournalHealth(path string) *journalHealth {
	return &journalHealth{path: path, failing: map[string]error{}}
}

// AppendFailed implements actors.AppendHealth.
func (h *journalHealth) AppendFailed(uid string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failing[uid] = err
}

// AppendSucceeded implements actors.AppendHealth.
func (h *journalHealth) AppendSucceeded(uid string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.failing, uid)
}

// Err is nil while every pod's appends succeed; otherwise it names the
// journal, how many pods wait for it and one of their errors.
func (h *journalHealth) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.failing) == 0 {
		return nil
	}
	uids := make([]string, 0, len(h.failing))
	for uid := range h.failing {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	return fmt.Errorf("journal %s: appends failing for %d pod(s), which wait and retry (pod %s: %w)",
		h.path, len(uids), uids[0], h.failing[uids[0]])
}
