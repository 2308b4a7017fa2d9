package journal

// answerer answers the requests of committed batches in a goroutine of its
// own, so that the writer starts its next transaction while the callers of
// the last one are woken. Each answer readies a parked caller; at thousands
// of callers per batch that was about a sixth of the writer's time, spent
// while every new request waited for it.
//
// An answered request is handed to its caller, which releases it: the
// answerer reads nothing of a request after sending its outcome. The
// writer hands over a batch only once it is committed and published, so
// the guarantees of Journal.commit hold for every answer.
type answerer struct {
	// todo are the committed batches, each request with its outcome set.
	// Its capacity of one lets the writer commit the next batch while
	// the last is answered, and no further ahead.
	todo chan []*request
	// free returns answered batch slices to the writer for reuse.
	free chan []*request
	done chan struct{}
}

func startAnswerer() *answerer {
	a := &answerer{
		todo: make(chan []*request, 1),
		free: make(chan []*request, 2),
		done: make(chan struct{}),
	}
	go a.run()
	return a
}

func (a *answerer) run() {
	defer close(a.done)
	for batch := range a.todo {
		for i, r := range batch {
			batch[i] = nil
			err := r.outcome
			r.done <- err // never blocks: done is buffered and receives once
		}
		select {
		case a.free <- batch[:0]:
		default:
		}
	}
}

// answer hands a committed batch over and returns an empty slice (nil if
// none is free) for the writer's next batch. Writer only.
func (a *answerer) answer(batch []*request) []*request {
	a.todo <- batch
	select {
	case b := <-a.free:
		return b
	default:
		return nil
	}
}

// stop answers what was handed over and ends the goroutine. Writer only,
// once.
func (a *answerer) stop() {
	close(a.todo)
	<-a.done
}
