//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/devcluster"
	"github.com/backfill-dev/backfill/internal/devcluster/process"
	"github.com/backfill-dev/backfill/test/framework"
)

// managerProc is one `backfill manager` process.
type managerProc struct {
	slot    int
	proc    *process.Process
	metrics string // host:port of its /metrics
	killed  bool
}

// managers runs the manager processes of a fault test from the built
// binary, one per slot, each on free loopback ports with its log under
// the cluster's logs. Every process is signalled by the PID it started
// with. A process that exits without being killed is started again and
// noted: without leader election that is a crash.
type managers struct {
	t          *testing.T
	kubeconfig string
	state      *devcluster.State
	logDir     string
	flags      []string

	mu       sync.Mutex
	slots    []*managerProc
	stopping bool
	starts   int
	kills    int
	// exits are the processes that exited on their own, with how.
	exits []string
	wg    sync.WaitGroup
}

// startManagers starts n managers with the given extra flags; they are
// stopped when the test ends.
func startManagers(t *testing.T, dc *devCluster, n int, flags ...string) *managers {
	t.Helper()
	m := &managers{t: t, kubeconfig: dc.state.Kubeconfig, state: dc.state, logDir: filepath.Join(dc.stateDir, "logs"), flags: flags, slots: make([]*managerProc, n)}
	t.Cleanup(m.stop)
	for slot := range n {
		if err := m.start(slot); err != nil {
			t.Fatalf("Starting manager %d: %v", slot, err)
		}
	}
	return m
}

// start runs the manager of a slot.
func (m *managers) start(slot int) error {
	ports := make([]int, 2)
	for i := range ports {
		p, err := framework.FreePort()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	metrics := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	// The cluster's reclaim flags first: usage from its Prometheus, which
	// scrapes every manager of the slots (scrapeManagers).
	args := append(append([]string{"manager", "--kubeconfig", m.kubeconfig,
		"--metrics-bind-address", metrics,
		"--health-probe-bind-address", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		"--log-format", "text"}, m.state.ManagerFlags...), m.flags...)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopping {
		return nil
	}
	proc, err := process.Start(backfill, args, nil, filepath.Join(m.logDir, fmt.Sprintf("manager-%d.log", slot)))
	if err != nil {
		return err
	}
	mp := &managerProc{slot: slot, proc: proc, metrics: metrics}
	m.slots[slot] = mp
	if err := m.scrapeManagers(); err != nil {
		return err
	}
	m.starts++
	m.wg.Add(1)
	go m.restartIfExited(mp)
	return nil
}

// scrapeManagers makes the cluster's Prometheus scrape the managers of
// every slot, whose leader exports what reclaimed capacity reads; called
// with m.mu held.
func (m *managers) scrapeManagers() error {
	var addrs []string
	for _, mp := range m.slots {
		if mp != nil {
			addrs = append(addrs, mp.metrics)
		}
	}
	return devcluster.WriteManagerTargets(m.state, addrs)
}

// restartIfExited starts a slot again when its process exits on its own.
func (m *managers) restartIfExited(mp *managerProc) {
	defer m.wg.Done()
	err := mp.proc.Wait()
	m.mu.Lock()
	own := !mp.killed && !m.stopping
	if own {
		m.exits = append(m.exits, fmt.Sprintf("manager %d (pid %d): %v", mp.slot, mp.proc.PID(), err))
	}
	m.mu.Unlock()
	if own {
		m.t.Logf("Manager %d (pid %d) exited on its own (%v); starting it again", mp.slot, mp.proc.PID(), err)
		if err := m.start(mp.slot); err != nil {
			m.t.Errorf("Starting manager %d again: %v", mp.slot, err)
		}
	}
}

// kill sends SIGKILL to the slot's process by its PID and waits for it to
// exit. It returns the killed process; start runs the slot again.
func (m *managers) kill(slot int) (*managerProc, error) {
	m.mu.Lock()
	mp := m.slots[slot]
	mp.killed = true
	m.kills++
	m.mu.Unlock()
	if err := syscall.Kill(mp.proc.PID(), syscall.SIGKILL); err != nil {
		return mp, fmt.Errorf("killing manager %d (pid %d): %w", slot, mp.proc.PID(), err)
	}
	_ = mp.proc.Wait()
	return mp, nil
}

// current is the running process of a slot.
func (m *managers) current(slot int) *managerProc {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.slots[slot]
}

// stop ends every manager by its PID (SIGTERM, then SIGKILL).
func (m *managers) stop() {
	m.mu.Lock()
	m.stopping = true
	slots := append([]*managerProc(nil), m.slots...)
	m.mu.Unlock()
	for _, mp := range slots {
		if mp != nil {
			if err := mp.proc.Stop(15 * time.Second); err != nil {
				m.t.Errorf("Stopping manager %d: %v", mp.slot, err)
			}
		}
	}
	m.wg.Wait()
}

// exitedOnTheirOwn are the processes that exited without being killed.
func (m *managers) exitedOnTheirOwn() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.exits...)
}

func (m *managers) counts() (starts, kills int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.starts, m.kills
}

// leaderSlot is the slot whose manager reports itself leader in its
// metrics; -1 when none does.
func (m *managers) leaderSlot(ctx context.Context) int {
	for slot := range m.slots {
		v, err := scrapeMetric(ctx, m.current(slot).metrics, "leader_election_master_status", `name="backfill-manager"`)
		if err == nil && v == 1 {
			return slot
		}
	}
	return -1
}

// scrapeMetric sums the samples of a metric whose labels contain filter.
func scrapeMetric(ctx context.Context, addr, name, filter string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") || !strings.Contains(line, filter) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// leaseHolder is the holderIdentity of the managers' leader-election
// Lease; "" when it has none.
func leaseHolder(ctx context.Context, c client.Client) (string, error) {
	var lease coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: "backfill-manager"}, &lease); err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

// faultLoop does fault after a wait drawn from [lo, hi) and again after
// each, until ctx ends or it has done limit faults (0: no limit). It
// returns how many it did and the first error, which ends it.
func faultLoop(ctx context.Context, rng *rand.Rand, lo, hi time.Duration, limit int, fault func(n int, after time.Duration) error) (int, error) {
	for n := 0; limit == 0 || n < limit; n++ {
		wait := lo + time.Duration(rng.Int64N(int64(hi-lo)))
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return n, nil
		case <-timer.C:
		}
		if err := fault(n+1, wait); err != nil {
			return n, err
		}
	}
	return limit, nil
}

// faults is a fault loop running in the background.
type faults struct {
	cancel context.CancelFunc
	done   chan struct{}
	n      int
	err    error
}

// faultsInBackground runs a fault loop in a goroutine until stop, or the
// end of the test.
func faultsInBackground(t *testing.T, loop func(ctx context.Context) (int, error)) *faults {
	ctx, cancel := context.WithCancel(context.Background())
	f := &faults{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.n, f.err = loop(ctx)
	}()
	// Registered after the managers and the cluster, so it runs before
	// they stop: a fault must not act or log after its test has ended.
	t.Cleanup(func() { _, _ = f.stop() })
	return f
}

// stop ends the loop, waits for it and returns how many faults it did and
// the error that ended it.
func (f *faults) stop() (int, error) {
	f.cancel()
	<-f.done
	return f.n, f.err
}

// finished reports whether the loop has returned by itself.
func (f *faults) finished() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}
