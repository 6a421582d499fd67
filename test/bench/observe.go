package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

var (
	podsResource     = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	servicesResource = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	tfjobsResource   = kubeflowv1.GroupVersion.WithResource("tfjobs")
)

// arrivals records when a watch first saw each object of a namespace, and
// the job it belongs to (its job-name label).
type arrivals struct {
	mu    sync.Mutex
	first map[string]arrival
	err   error
}

type arrival struct {
	at  time.Time
	job string
}

// watchArrivals watches the metadata of pods or services in a namespace
// from now on, until ctx ends.
func (c *cluster) watchArrivals(ctx context.Context, gvr schema.GroupVersionResource, namespace string) (*arrivals, error) {
	res := c.meta.Resource(gvr).Namespace(namespace)
	list, err := res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	a := &arrivals{first: map[string]arrival{}}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return res.Watch(ctx, opts)
	}}
	err = runWatch(ctx, list.ResourceVersion, lw, func(e watch.Event) {
		obj, ok := e.Object.(*metav1.PartialObjectMetadata)
		if !ok || e.Type != watch.Added {
			return
		}
		now := time.Now()
		a.mu.Lock()
		if _, seen := a.first[obj.Name]; !seen {
			a.first[obj.Name] = arrival{at: now, job: obj.Labels[kubeflowv1.JobNameLabel]}
		}
		a.mu.Unlock()
	}, func(err error) {
		a.mu.Lock()
		a.err = err
		a.mu.Unlock()
	})
	return a, err
}

// count is the number of objects seen so far.
func (a *arrivals) count() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.first), a.err
}

// waitFor waits until n objects were seen and returns when the last of
// them arrived.
func (a *arrivals) waitFor(ctx context.Context, n int) (time.Time, error) {
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		seen, err := a.count()
		return seen >= n, err
	})
	if err != nil {
		seen, _ := a.count()
		return time.Time{}, fmt.Errorf("waiting for %d objects (%d seen): %w", n, seen, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var last time.Time
	for _, e := range a.first {
		if e.at.After(last) {
			last = e.at
		}
	}
	return last, nil
}

// earliest is when the first object arrived; zero if none did.
func (a *arrivals) earliest() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	var first time.Time
	for _, e := range a.first {
		if first.IsZero() || e.at.Before(first) {
			first = e.at
		}
	}
	return first
}

// completeAt is, per job, when its n-th object arrived; jobs with fewer
// are left out.
func (a *arrivals) completeAt(n int) map[string]time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	byJob := map[string][]time.Time{}
	for _, e := range a.first {
		byJob[e.job] = append(byJob[e.job], e.at)
	}
	out := map[string]time.Time{}
	for job, times := range byJob {
		if len(times) < n {
			continue
		}
		var last time.Time
		for _, t := range times {
			if t.After(last) {
				last = t
			}
		}
		out[job] = last
	}
	return out
}

// statusLog follows the TFJobs of a namespace: when each was created, and
// every change of their status, which is what a status write that changed
// something leaves behind (a write that changes nothing leaves no event).
type statusLog struct {
	mu    sync.Mutex
	added map[string]time.Time
	last  map[string]kubeflowv1.JobStatus
	// changes are updates whose status differs from the job's previous
	// one; reconcileTimeOnly of them differ only in lastReconcileTime.
	changes, reconcileTimeOnly int
	// otherUpdates left the status as it was (metadata or spec).
	otherUpdates int
	err          error
}

// watchStatus watches the TFJobs of a namespace from now on.
func (c *cluster) watchStatus(ctx context.Context, namespace string) (*statusLog, error) {
	var list kubeflowv1.TFJobList
	if err := c.ctrl.List(ctx, &list, client.InNamespace(namespace), client.Limit(1)); err != nil {
		return nil, fmt.Errorf("listing TFJobs: %w", err)
	}
	s := &statusLog{added: map[string]time.Time{}, last: map[string]kubeflowv1.JobStatus{}}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return c.ctrl.Watch(ctx, &kubeflowv1.TFJobList{}, client.InNamespace(namespace), &client.ListOptions{Raw: &opts})
	}}
	err := runWatch(ctx, list.ResourceVersion, lw, s.observe, func(err error) {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	})
	return s, err
}

func (s *statusLog) observe(e watch.Event) {
	job, ok := e.Object.(*kubeflowv1.TFJob)
	if !ok || (e.Type != watch.Added && e.Type != watch.Modified) {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Type {
	case watch.Added:
		s.added[job.Name] = now
	case watch.Modified:
		before := s.last[job.Name]
		switch {
		case equality.Semantic.DeepEqual(before, job.Status):
			s.otherUpdates++
		case equality.Semantic.DeepEqual(withoutReconcileTime(before), withoutReconcileTime(job.Status)):
			s.changes++
			s.reconcileTimeOnly++
		default:
			s.changes++
		}
	}
	s.last[job.Name] = job.Status
}

func withoutReconcileTime(st kubeflowv1.JobStatus) kubeflowv1.JobStatus {
	st.LastReconcileTime = nil
	return st
}

// snapshot returns the creation times and change counts so far.
func (s *statusLog) snapshot() (added map[string]time.Time, changes, reconcileTimeOnly, other int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	added = make(map[string]time.Time, len(s.added))
	for k, v := range s.added {
		added[k] = v
	}
	return added, s.changes, s.reconcileTimeOnly, s.otherUpdates, s.err
}

// runWatch follows a watch from resourceVersion in the background until
// ctx ends, resuming it when the apiserver closes it; a watch that cannot
// resume (e.g. its resourceVersion expired) is reported through fail.
func runWatch(ctx context.Context, resourceVersion string, lw cache.WatcherWithContext, handle func(watch.Event), fail func(error)) error {
	w, err := watchtools.NewRetryWatcherWithContext(ctx, resourceVersion, lw)
	if err != nil {
		return err
	}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.ResultChan():
				if !ok {
					if ctx.Err() == nil {
						fail(fmt.Errorf("a watch ended early"))
					}
					return
				}
				if e.Type == watch.Error {
					fail(fmt.Errorf("a watch failed: %v", e.Object))
					return
				}
				handle(e)
			}
		}
	}()
	return nil
}
