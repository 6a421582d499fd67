package report

import (
	"container/list"
	"time"
)

// lru holds at most size entries, each until its own time: past it an
// entry is gone, and a new entry in a full lru pushes out the one used
// least lately. Not safe for concurrent use.
type lru[K comparable, V any] struct {
	size    int
	entries map[K]*list.Element
	order   *list.List // of *lruEntry, the most lately used first
}

type lruEntry[K comparable, V any] struct {
	key   K
	value V
	until time.Time
}

func newLRU[K comparable, V any](size int) *lru[K, V] {
	return &lru[K, V]{size: size, entries: map[K]*list.Element{}, order: list.New()}
}

// get is the value of key, if it is there at now.
func (c *lru[K, V]) get(key K, now time.Time) (V, bool) {
	var zero V
	el, ok := c.entries[key]
	if !ok {
		return zero, false
	}
	e := el.Value.(*lruEntry[K, V])
	if !now.Before(e.until) {
		c.remove(el)
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.value, true
}

// add keeps value for key until then.
func (c *lru[K, V]) add(key K, value V, until time.Time) {
	if el, ok := c.entries[key]; ok {
		*el.Value.(*lruEntry[K, V]) = lruEntry[K, V]{key: key, value: value, until: until}
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&lruEntry[K, V]{key: key, value: value, until: until})
	for c.order.Len() > c.size {
		c.remove(c.order.Back())
	}
}

func (c *lru[K, V]) remove(el *list.Element) {
	c.order.Remove(el)
	delete(c.entries, el.Value.(*lruEntry[K, V]).key)
}

func (c *lru[K, V]) len() int { return c.order.Len() }
