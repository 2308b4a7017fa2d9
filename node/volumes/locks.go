package volumes

import "sync"

// podLocks serializes the calls for one pod UID; the lock of a UID lives
// only while someone holds or waits for it.
type podLocks struct {
	mu    sync.Mutex
	locks map[string]*podLock
}

type podLock struct {
	sync.Mutex
	refs int
}

// lock locks uid and returns the unlock.
func (l *podLocks) lock(uid string) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*podLock{}
	}
	pl := l.locks[uid]
	if pl == nil {
		pl = &podLock{}
		l.locks[uid] = pl
	}
	pl.refs++
	l.mu.Unlock()
	pl.Lock()
	return func() {
		pl.Unlock()
		l.mu.Lock()
		if pl.refs--; pl.refs == 0 {
			delete(l.locks, uid)
		}
		l.mu.Unlock()
	}
}
