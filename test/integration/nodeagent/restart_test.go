//go:build integration

package nodeagent

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/test/framework"
)

// restartScene is a node of this machine's real cgroups, with a training
// pod on reclaimed capacity whose two threads want both CPUs and an online
// service of one busy thread (that the test pauses to make the node
// light), each in its cgroups as the kubelet makes them; and the node's
// pods in the API server, where the agents list them.
type restartScene struct {
	node                         *realNode
	proc, kubeconfig             string
	nodeName                     string
	train, web                   string // pod cgroups
	trainContainer, webContainer string
	webPID                       int
}

func newRestartScene(t *testing.T) *restartScene {
	t.Helper()
	n := newRealNode(t)
	ns := newNamespace(t)
	sc := &restartScene{node: n, nodeName: "node-" + ns}
	now := time.Now()
	train := offlinePod(t, ns, "train", sc.nodeName, now.Add(-time.Hour))
	web := onlinePod(t, ns, "web", sc.nodeName, now.Add(-24*time.Hour))
	sc.train, sc.trainContainer = sc.podGroups(train)
	sc.web, sc.webContainer = sc.podGroups(web)

	// The kubelet's values: the node's CPUs weighed for kubepods, the
	// burstable class its pods' requests (1 core), best effort the least;
	// web limited to its 2 cores.
	n.makeGroup(t, "", 2048, -1, false)
	n.makeGroup(t, n.fs.QOSGroup(corev1.PodQOSBurstable), 1024, -1, false)
	n.makeGroup(t, sc.web, 1024, 200_000, false)
	n.makeGroup(t, sc.webContainer, 1024, 200_000, true)
	n.makeGroup(t, n.fs.QOSGroup(corev1.PodQOSBestEffort), 2, -1, false)
	n.makeGroup(t, sc.train, 2, -1, false)
	n.makeGroup(t, sc.trainContainer, 2, -1, true)
	if _, err := os.Stat(filepath.Join(n.cpuDir(sc.train), "cpu.idle")); err != nil {
		t.Skipf("the kernel has no cpu.idle (Linux 5.15 or later has it): %v", err)
	}
	sc.webPID = startSpinner(t, 1)
	n.moveInto(t, sc.webContainer, sc.webPID)
	n.moveInto(t, sc.trainContainer, startSpinner(t, 2))
	sc.proc = n.scopeProc(t, sc.webContainer, sc.trainContainer)

	var err error
	if sc.kubeconfig, err = apiServer.AdminKubeconfig(t.TempDir(), "node-agent-"+ns); err != nil {
		t.Fatal(err)
	}
	return sc
}

// podGroups are a pod's cgroup and its one container's.
func (sc *restartScene) podGroups(pod *corev1.Pod) (string, string) {
	group := sc.node.fs.PodGroup(pod.Status.QOSClass, pod.UID)
	_, id, _ := strings.Cut(pod.Status.ContainerStatuses[0].ContainerID, "://")
	return group, path.Join(group, id)
}

// signalWeb stops or continues the online service.
func (sc *restartScene) signalWeb(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(sc.webPID, sig); err != nil {
		t.Fatalf("signal %v to the online process %d: %v", sig, sc.webPID, err)
	}
}

// agentProcess is `backfill node-agent` running on the scene's node.
type agentProcess struct {
	name, log, health string
	cmd               *exec.Cmd
	exited            chan struct{}
	err               error
}

// restartInterval is the agents' tick.
const restartInterval = 500 * time.Millisecond

// startAgent runs the built agent on the scene's node: the ceiling
// applies from a quarter of the node and is released below 15% after 2
// ticks; cpuIdle is its --cpu-idle. It is stopped by its PID, at the
// latest when the test ends.
func (sc *restartScene) startAgent(t *testing.T, name string, cpuIdle bool) *agentProcess {
	t.Helper()
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	a := &agentProcess{name: name, log: filepath.Join(t.TempDir(), name+".log"), health: "127.0.0.1:" + strconv.Itoa(port), exited: make(chan struct{})}
	out, err := os.Create(a.log)
	if err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command(backfillBin, "node-agent", "--kubeconfig="+sc.kubeconfig, "--node-name="+sc.nodeName,
		"--metrics-bind-address=0", "--health-probe-bind-address="+a.health,
		"--cgroup-root="+sc.node.fs.Root, "--kubelet-cgroup-root=/"+sc.node.fs.Parent, "--proc-root="+sc.proc,
		"--interval="+restartInterval.String(), "--cpu-threshold=75", "--cpu-floor=5", "--cpu-activation=25",
		"--cpu-activation-band=10", "--cpu-release-ticks=2", "--cpu-idle="+strconv.FormatBool(cpuIdle),
		"--memory-threshold=0", "--log-format=json")
	a.cmd.Stdout, a.cmd.Stderr = out, out
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive a test binary that dies
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start the %s agent: %v", name, err)
	}
	go func() {
		a.err = a.cmd.Wait()
		_ = out.Close()
		close(a.exited)
	}()
	t.Cleanup(func() {
		a.signal(t, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("the %s agent's log:\n%s", name, a.output(t))
		}
	})
	return a
}

// signal sends sig to the agent by its PID, unless it has exited, and
// waits for it to exit.
func (a *agentProcess) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	select {
	case <-a.exited:
		return
	default:
	}
	if err := syscall.Kill(a.cmd.Process.Pid, sig); err != nil {
		t.Fatalf("signal %v to the %s agent (PID %d): %v", sig, a.name, a.cmd.Process.Pid, err)
	}
	select {
	case <-a.exited:
	case <-time.After(framework.Timeout):
		t.Fatalf("the %s agent did not exit within %v of %v", a.name, framework.Timeout, sig)
	}
}

// ready waits until the agent answers /readyz: it has listed its node's
// pods and measured the node over a tick, so it has reconciled every pod
// with a measure.
func (a *agentProcess) ready(t *testing.T) {
	t.Helper()
	framework.Eventually(t, "the "+a.name+" agent to be ready", func(ctx context.Context) (bool, error) {
		select {
		case <-a.exited:
			return false, fmt.Errorf("the %s agent exited: %w", a.name, a.err)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a.health+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil // not listening yet
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

func (a *agentProcess) output(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(a.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantNoErrors fails the test for every error the agent logged.
func (a *agentProcess) wantNoErrors(t *testing.T) {
	t.Helper()
	for line := range strings.Lines(a.output(t)) {
		if strings.Contains(line, `"level":"error"`) {
			t.Errorf("the %s agent logged an error: %s", a.name, line)
		}
	}
}

// TestRestartOnRealCgroups: an agent killed with SIGKILL while it caps
// training leaves its ceiling and cpu.idle behind. The next one, started
// on a light node and without the idle class, lifts them by the time it is
// ready (one tick after its first), though it never set them, and with
// them a ceiling and idle class left on the online pod; a clean exit lifts
// what the agent set. No start logs an error.
func TestRestartOnRealCgroups(t *testing.T) {
	sc := newRestartScene(t)
	n := sc.node
	capped := func(ctx context.Context) (bool, error) {
		c := n.cpu(t, sc.train)
		return c.quota > 0 && c.idle, nil
	}
	lifted := map[string]cpu{sc.train: {quota: -1}, sc.trainContainer: {quota: -1}, sc.web: {quota: 200_000}, sc.webContainer: {quota: 200_000}}

	first := sc.startAgent(t, "first", true)
	framework.Eventually(t, "the first agent to cap training under load and make it idle", capped)
	first.signal(t, syscall.SIGKILL)
	if left := n.cpu(t, sc.train); left.quota <= 0 || !left.idle {
		t.Fatalf("after SIGKILL the training pod's cgroup is %+v, want the ceiling and cpu.idle left behind", left)
	}

	// The node goes light. The online pod carries a ceiling and the idle
	// class, as if it had been on reclaimed capacity once.
	sc.signalWeb(t, syscall.SIGSTOP)
	n.writeCPU(t, sc.webContainer, 1024, 20_000)
	n.writeCPU(t, sc.web, 1024, 20_000)
	n.setIdle(t, sc.web, true)
	started := time.Now()
	second := sc.startAgent(t, "second", false)
	second.ready(t)
	t.Logf("the second agent was ready %v after its start", time.Since(started).Round(time.Millisecond))
	wantCPU(t, n, "once the second agent is ready", lifted)
	second.signal(t, syscall.SIGTERM)
	if second.err != nil {
		t.Errorf("the second agent's clean exit: %v", second.err)
	}

	sc.signalWeb(t, syscall.SIGCONT)
	third := sc.startAgent(t, "third", true)
	framework.Eventually(t, "the third agent to cap training under load and make it idle", capped)
	third.signal(t, syscall.SIGTERM)
	if third.err != nil {
		t.Errorf("the third agent's clean exit: %v", third.err)
	}
	wantCPU(t, n, "after the third agent's clean exit", lifted)

	for _, a := range []*agentProcess{first, second, third} {
		a.wantNoErrors(t)
	}
}

// wantCPU checks the quota and idle class of cgroups.
func wantCPU(t *testing.T, n *realNode, when string, want map[string]cpu) {
	t.Helper()
	for group, w := range want {
		if got := n.cpu(t, group); got != w {
			t.Errorf("%s, cgroup %s: quota %d µs, idle %t; want %d, %t", when, group, got.quota, got.idle, w.quota, w.idle)
		}
	}
}
