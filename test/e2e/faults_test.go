//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/devcluster"
)

// The fault suite: TFJobs run through creation, pod failures retried
// under restartPolicy ExitCode, evictions and success while the operator
// or the control plane is killed under them. Afterwards every job is in
// the state its pod history dictates, each restart and disruption is
// counted exactly once, no replica ever had two live pods, and once the
// jobs are deleted no pod or service is left. The simulated training code
// reports its progress to the manager throughout. The size fits CI;
// -faults.jobs=100 runs the full size, -faults.seed replays a run.

// leaseNamespace holds the managers' leader-election Lease.
const leaseNamespace = "kube-system"

// The manager is killed with SIGKILL every 5-10 s (drawn from the seed)
// and started again, from the creation of the jobs until their pods are
// gone.
func TestFaultsManagerKilled(t *testing.T) {
	r := newFaultRun(t, *faultJobs)
	mgrs := startManagers(t, r.dc, 1)
	r.createJobs()
	kills := faultsInBackground(t, func(ctx context.Context) (int, error) {
		return faultLoop(ctx, r.rng, 5*time.Second, 10*time.Second, 0, func(n int, after time.Duration) error {
			killed, err := mgrs.kill(0)
			if err != nil {
				return err
			}
			if err := mgrs.start(0); err != nil {
				return err
			}
			t.Logf("Kill %d: manager pid %d killed after %v, %s; started again as pid %d",
				n, killed.proc.PID(), after.Round(100*time.Millisecond), r.finishedNow(), mgrs.current(0).proc.PID())
			return nil
		})
	})
	r.waitFinished()
	r.check()
	r.deleteAndCheckOrphans()
	n, err := kills.stop()
	if err != nil {
		t.Errorf("Killing the manager: %v", err)
	}
	if exits := mgrs.exitedOnTheirOwn(); len(exits) > 0 {
		t.Errorf("Managers exited without being killed: %s", strings.Join(exits, "; "))
	}
	starts, _ := mgrs.counts()
	t.Logf("Manager killed %d times (%d starts) over %v: %d TFJobs, %d pods", n, starts, time.Since(r.created).Round(time.Second), len(r.jobs), r.watch.size())
	if n == 0 {
		t.Errorf("The manager was never killed: the run ended within 5 s")
	}
}

// kube-apiserver and etcd are killed with SIGKILL twice in the middle of
// the run; `backfill dev up --restart-components` starts them again with
// the same arguments and data, as a kubelet restarts static pods.
func TestFaultsControlPlaneRestarted(t *testing.T) {
	r := newFaultRun(t, max(*faultJobs/2, 8), "--restart-components")
	mgrs := startManagers(t, r.dc, 1)
	r.createJobs()
	restarts := faultsInBackground(t, func(ctx context.Context) (int, error) {
		return faultLoop(ctx, r.rng, 8*time.Second, 15*time.Second, 2, func(n int, after time.Duration) error {
			err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
				return !r.inject.due(), nil
			})
			if err != nil {
				return fmt.Errorf("waiting until no fault is due: %w", err)
			}
			progress := r.finishedNow()
			down, err := restartControlPlane(ctx, r.dc)
			if err != nil {
				return err
			}
			t.Logf("Restart %d: kube-apiserver and etcd killed %v after the last fault, %s; serving again after %v",
				n, after.Round(100*time.Millisecond), progress, down.Round(100*time.Millisecond))
			return nil
		})
	})
	r.waitFinished()
	waitFor(t, 3*time.Minute, "both control-plane restarts", func(context.Context) (bool, string, error) {
		return restarts.finished(), "", nil
	})
	if n, err := restarts.stop(); err != nil || n != 2 {
		t.Fatalf("Restarting the control plane: %d restarts, %v", n, err)
	}
	r.check()
	r.deleteAndCheckOrphans()
	if exits := mgrs.exitedOnTheirOwn(); len(exits) > 0 {
		t.Errorf("The manager exited: %s", strings.Join(exits, "; "))
	}
	t.Logf("Control plane restarted twice over %v: %d TFJobs, %d pods", time.Since(r.created).Round(time.Second), len(r.jobs), r.watch.size())
}

// restartControlPlane kills kube-apiserver and etcd by the PIDs in the
// cluster's state and waits until the state names their successors and
// the apiserver serves again; it returns how long that took.
func restartControlPlane(ctx context.Context, dc *devCluster) (time.Duration, error) {
	state, err := devcluster.ReadState(dc.stateDir)
	if err != nil {
		return 0, err
	}
	old := map[string]int{}
	for _, c := range state.Components {
		if c.Name == "kube-apiserver" || c.Name == "etcd" {
			old[c.Name] = c.PID
		}
	}
	if len(old) != 2 {
		return 0, fmt.Errorf("the state names %v, want kube-apiserver and etcd", old)
	}
	started := time.Now()
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := syscall.Kill(old[name], syscall.SIGKILL); err != nil {
			return 0, fmt.Errorf("killing %s (pid %d): %w", name, old[name], err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := devcluster.ReadState(dc.stateDir)
		if err != nil {
			return false, nil
		}
		for _, c := range s.Components {
			if pid, ok := old[c.Name]; ok && (c.PID == pid || syscall.Kill(c.PID, 0) != nil) {
				return false, nil
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return dc.client.Get(cctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{}) == nil, nil
	})
	if err != nil {
		return 0, fmt.Errorf("kube-apiserver and etcd (pids %v) not restarted and serving: %w", old, err)
	}
	return time.Since(started), nil
}

// Two managers under leader election, with a 6 s lease: the leader (the
// one whose metrics say so, holding the Lease) is killed with SIGKILL
// twice; each time the other takes the Lease over and reconciles, and the
// killed one is started again as the standby.
func TestFaultsLeaderFailover(t *testing.T) {
	const lease = 6 * time.Second
	r := newFaultRun(t, max(*faultJobs/2, 8))
	mgrs := startManagers(t, r.dc, 2, "--leader-elect", "--leader-election-namespace="+leaseNamespace,
		"--leader-election-lease-duration="+lease.String())
	waitFor(t, time.Minute, "a leader among the two managers", func(ctx context.Context) (bool, string, error) {
		holder, err := leaseHolder(ctx, r.c)
		if err != nil {
			return false, err.Error(), nil
		}
		return holder != "" && mgrs.leaderSlot(ctx) >= 0, "lease holder " + holder, nil
	})
	r.createJobs()
	failovers := faultsInBackground(t, func(ctx context.Context) (int, error) {
		return faultLoop(ctx, r.rng, 8*time.Second, 15*time.Second, 2, func(n int, after time.Duration) error {
			return failover(ctx, t, r, mgrs, n, lease)
		})
	})
	r.waitFinished()
	waitFor(t, 3*time.Minute, "both failovers", func(context.Context) (bool, string, error) {
		return failovers.finished(), "", nil
	})
	if n, err := failovers.stop(); err != nil || n != 2 {
		t.Fatalf("Failing over: %d failovers, %v", n, err)
	}
	r.check()
	r.deleteAndCheckOrphans()
	if exits := mgrs.exitedOnTheirOwn(); len(exits) > 0 {
		// A manager that cannot renew its lease in time exits, as it must.
		t.Logf("Managers that exited on their own (lost the lease) and were started again: %s", strings.Join(exits, "; "))
	}
	t.Logf("Leader killed twice over %v: %d TFJobs, %d pods", time.Since(r.created).Round(time.Second), len(r.jobs), r.watch.size())
}

// failover kills the leader and waits until the standby holds the Lease
// and reconciles; then it starts the killed slot again as the standby.
func failover(ctx context.Context, t *testing.T, r *faultRun, mgrs *managers, n int, lease time.Duration) error {
	var holder string
	leader := -1
	// A leader that could not renew in time steps down; wait for the next.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		h, err := leaseHolder(ctx, r.c)
		holder, leader = h, mgrs.leaderSlot(ctx)
		return err == nil && holder != "" && leader >= 0, nil
	})
	if err != nil {
		return fmt.Errorf("no leader to kill: lease holder %q, manager %d reports itself leader: %w", holder, leader, err)
	}
	standby := 1 - leader
	// One leader at a time: the standby has not reconciled anything.
	v, err := scrapeMetric(ctx, mgrs.current(standby).metrics, "controller_runtime_reconcile_total", `controller="tfjob-controller"`)
	if err != nil {
		return fmt.Errorf("reading the metrics of standby manager %d: %w", standby, err)
	}
	if v != 0 {
		return fmt.Errorf("standby manager %d reconciled %v times while manager %d leads", standby, v, leader)
	}
	progress := r.finishedNow()
	killed, err := mgrs.kill(leader)
	if err != nil {
		return err
	}
	killedAt := time.Now()
	var newHolder string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		h, err := leaseHolder(ctx, r.c)
		newHolder = h
		return err == nil && h != "" && h != holder, nil
	})
	if err != nil {
		return fmt.Errorf("no manager took the lease over from %s: %w", holder, err)
	}
	takeover := time.Since(killedAt)
	var reconciles float64
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		reconciles, _ = scrapeMetric(ctx, mgrs.current(standby).metrics, "controller_runtime_reconcile_total", `controller="tfjob-controller"`)
		return mgrs.leaderSlot(ctx) == standby && reconciles > 0, nil
	})
	if err != nil {
		return fmt.Errorf("manager %d holds no lead or reconciles nothing after taking over: %w", standby, err)
	}
	retry := lease / 5
	t.Logf("Failover %d: leader manager %d (pid %d) killed, %s; manager %d (pid %d) took the lease over as %s after %v (lease %v, retry period %v, jittered up to %v) and reconciles (%v passes after %v)",
		n, leader, killed.proc.PID(), progress, standby, mgrs.current(standby).proc.PID(), newHolder, takeover.Round(100*time.Millisecond),
		lease, retry, retry*22/10, reconciles, time.Since(killedAt).Round(100*time.Millisecond))
	return mgrs.start(leader)
}
