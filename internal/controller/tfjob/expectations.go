package tfjob

import (
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// expectationTimeout bounds how long a job waits for the cache to show its
// own writes; an event lost to a watch re-list must not stall it forever.
const expectationTimeout = 2 * time.Minute

// expectations remember, per job, the writes of the last pass that the
// cache has not shown yet. A pass is planned only from a cache that holds
// them all, so it never acts on a state older than its own writes (the
// deterministic names already make a duplicate create impossible; this
// saves the wasted calls and keeps counts honest).
type expectations struct {
	mu    sync.Mutex
	byJob map[types.UID]*pending
}

// pending are the writes a job waits to see.
type pending struct {
	// staleVersion is the job's resourceVersion before our status write; a
	// cached job still at it has not seen the write.
	staleVersion string
	created      sets.Set[string]    // pod and service names, kind-prefixed
	deleted      sets.Set[types.UID] // pods to see terminating or gone
	released     sets.Set[types.UID] // pods to see without our finalizer
	noticed      sets.Set[types.UID] // pods to see with a stop notice
	deadline     time.Time
}

func newExpectations() *expectations {
	return &expectations{byJob: map[types.UID]*pending{}}
}

// expect records the writes of a pass. A pass that wrote nothing leaves
// nothing to wait for, and no entry: a finished job is reconciled once
// after a restart and never again, and must not hold memory.
func (e *expectations) expect(job types.UID, p *pending, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p.empty() {
		delete(e.byJob, job)
		return
	}
	p.deadline = now.Add(expectationTimeout)
	e.byJob[job] = p
}

// empty reports whether the pass wrote nothing to wait for.
func (p *pending) empty() bool {
	return p.staleVersion == "" && p.created.Len() == 0 && p.deleted.Len() == 0 && p.released.Len() == 0 && p.noticed.Len() == 0
}

// satisfied reports whether the cache shows every write the job waits for,
// or how long to wait before giving up on the rest.
func (e *expectations) satisfied(job types.UID, version string, obs observed, now time.Time) (bool, time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.byJob[job]
	if p == nil {
		return true, 0
	}
	if !now.Before(p.deadline) || p.seen(version, obs) {
		delete(e.byJob, job)
		return true, 0
	}
	return false, p.deadline.Sub(now)
}

// forget drops what a deleted job waited for.
func (e *expectations) forget(job types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byJob, job)
}

// seen reports whether obs holds all pending writes.
func (p *pending) seen(version string, obs observed) bool {
	if p.staleVersion != "" && version == p.staleVersion {
		return false
	}
	for name := range p.created {
		if !obs.has(name) {
			return false
		}
	}
	for _, pod := range obs.pods {
		if p.deleted.Has(pod.UID) && pod.DeletionTimestamp == nil {
			return false
		}
		if p.released.Has(pod.UID) && hasTrackingFinalizer(pod) {
			return false
		}
		if p.noticed.Has(pod.UID) && pod.Annotations[StopAtAnnotation] == "" {
			return false
		}
	}
	return true
}

// Keys of created objects in pending.created.
func podKey(name string) string     { return "pod/" + name }
func serviceKey(name string) string { return "service/" + name }

// has reports whether the cache holds an object with the key's name, owned
// or not.
func (o observed) has(key string) bool {
	if name, ok := strings.CutPrefix(key, "pod/"); ok {
		_, owned := o.pods[name]
		return owned || o.takenPods.Has(name)
	}
	name, _ := strings.CutPrefix(key, "service/")
	_, owned := o.services[name]
	return owned || o.takenServices.Has(name)
}
