package podstatus

// Subscribe returns a channel that receives a notification after every
// change of the Cache (a status stored or a pod removed; dropped stale
// updates are no change), and a function that ends the subscription.
//
// Notifications are coalesced: the channel has a buffer of one and a
// notification is dropped when one is already pending, so a receiver learns
// that something changed since its last receive, not how often. The channel
// is never closed. Unsubscribing twice is harmless.
func (c *Cache) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	id := c.nextSub
	c.nextSub++
	c.subs[id] = ch
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}

// notifyLocked notifies every subscriber without blocking. c.mu is held.
func (c *Cache) notifyLocked() {
	for _, ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
