package journal

import (
	"errors"
	"fmt"
	"testing"
)

// The answerer answers every request handed over with its own outcome, also
// those handed over just before stop, and keeps no reference to them.
func TestAnswererAnswersEachRequestWithItsOutcome(t *testing.T) {
	a := startAnswerer()
	errRejected := errors.New("rejected")
	newBatch := func(n int) []*request {
		batch := make([]*request, n)
		for i := range batch {
			batch[i] = &request{done: make(chan error, 1), uid: fmt.Sprintf("p%d", i)}
			if i%2 == 1 {
				batch[i].outcome = fmt.Errorf("request %d: %w", i, errRejected)
			}
		}
		return batch
	}
	check := func(batch, handed []*request) {
		t.Helper()
		for i, r := range batch {
			err := <-r.done
			if (i%2 == 1) != errors.Is(err, errRejected) {
				t.Fatalf("request %d answered with %v", i, err)
			}
			if handed[i] != nil {
				t.Fatalf("the answered batch still holds request %d", i)
			}
		}
	}
	first := newBatch(5)
	handed := append([]*request(nil), first...)
	if next := a.answer(handed); len(next) != 0 {
		t.Fatalf("answer returned a slice of %d requests for the next batch", len(next))
	}
	check(first, handed)

	second := newBatch(3)
	handed = append([]*request(nil), second...)
	a.answer(handed)
	a.stop()
	check(second, handed)
}
