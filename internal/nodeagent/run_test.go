package nodeagent

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// unsyncedPods is a pod source that has not listed its node's pods until
// the test says so, and answers Pods with an error before, as Cluster does.
type unsyncedPods struct {
	podList
	synced  chan struct{}
	waiting chan struct{} // closed when Run first waits
	once    sync.Once
}

func (u *unsyncedPods) WaitForSync(ctx context.Context) bool {
	u.once.Do(func() { close(u.waiting) })
	select {
	case <-u.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

func (u *unsyncedPods) Pods(ctx context.Context) ([]Pod, error) {
	select {
	case <-u.synced:
		return u.podList.Pods(ctx)
	default:
		return nil, errors.New("the node's pods are not listed yet")
	}
}

// errorLog is a logger that keeps the errors it is given and drops the
// rest.
type errorLog struct {
	mu     sync.Mutex
	errors []string
}

func (l *errorLog) Init(logr.RuntimeInfo)          {}
func (l *errorLog) Enabled(int) bool               { return true }
func (l *errorLog) Info(int, string, ...any)       {}
func (l *errorLog) WithValues(...any) logr.LogSink { return l }
func (l *errorLog) WithName(string) logr.LogSink   { return l }

func (l *errorLog) Error(err error, msg string, _ ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors = append(l.errors, msg+": "+err.Error())
}

func (l *errorLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errors...)
}

// Run ticks only once its pod source has listed the node's pods: before,
// it neither lists them (an error at every start) nor publishes a tick,
// so the agent is not ready.
func TestRunWaitsForThePodList(t *testing.T) {
	n := newFakeTree(t)
	n.addPod(t, trainPod, -1)
	source := &unsyncedPods{synced: make(chan struct{}), waiting: make(chan struct{})}
	source.set(trainPod)
	log := &errorLog{}
	s := DefaultSettings()
	s.Interval = 100 * time.Millisecond
	a, err := New(Config{FS: n.fs, Pods: source, Settings: s, Log: logr.New(log)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	waitFor(t, "Run to wait for the pod list", func() bool { return isClosed(source.waiting) })
	if last := a.Last(); !last.At.IsZero() {
		t.Errorf("a tick before the pods were listed: %+v", last)
	}
	close(source.synced)
	waitFor(t, "a tick after the pods were listed", func() bool { return !a.Last().At.IsZero() })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if errs := log.all(); len(errs) > 0 {
		t.Errorf("Run logged errors: %q", errs)
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
