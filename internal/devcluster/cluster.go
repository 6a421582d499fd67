package devcluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/devcluster/gpusim"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/devcluster/latencysim"
	"github.com/backfill-dev/backfill/internal/devcluster/process"
	"github.com/backfill-dev/backfill/internal/manager"
)

// stopTimeout bounds how long a child gets to exit after SIGTERM.
const stopTimeout = 15 * time.Second

// defaultWait bounds the waits for the cluster to converge.
const defaultWait = time.Minute

// Cluster is a running local cluster. Stop ends every part of it.
type Cluster struct {
	opts   Options
	out    io.Writer
	state  *State
	cp     *controlPlane
	config *rest.Config
	client client.Client

	// mu guards procs and state once the cluster runs: restarts
	// (restart.go) replace processes while Stop may be reading them.
	mu          sync.Mutex
	procs       []*process.Process  // in start order
	commands    map[string][]string // each child's command line, binary first
	envs        map[string][]string // each child's environment, nil for this process's
	stopping    bool
	kwok        *kwok.Kwok
	servers     []*http.Server
	stopManager context.CancelFunc
	managerDone chan error
	stopSim     context.CancelFunc
	// promAddr is Prometheus's address (prometheusAddress), reportAddr the
	// manager's report endpoint's (reportAddress), amAddr Alertmanager's
	// and alertSinkAddr its webhook sink's.
	promAddr, reportAddr, amAddr, alertSinkAddr string
	// ports are the ports freePorts handed out.
	ports portsHandedOut
	// day is the demo's compressed day; stopDemo ends it.
	day      clock
	stopDemo context.CancelFunc
}

// Up starts the local cluster and returns once every part is ready. It
// refuses to start over a cluster that runs in the same state directory.
func Up(ctx context.Context, opts Options, out io.Writer) (c *Cluster, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if s, err := ReadState(opts.StateDir); err == nil && s.Running() {
		return nil, fmt.Errorf("a local cluster is already running from %s (pid %d): use `backfill dev status`, or `backfill dev down` first", opts.StateDir, s.PID)
	}
	if err := resetStateDir(opts.StateDir); err != nil {
		return nil, err
	}
	if err := ensureTools(opts, out); err != nil {
		return nil, err
	}

	c = &Cluster{opts: opts, out: out, cp: &controlPlane{dir: opts.StateDir}, commands: map[string][]string{}}
	c.state = &State{PID: os.Getpid(), StartedAt: time.Now()}
	if err := c.state.write(opts.StateDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	for _, step := range c.steps() {
		fmt.Fprintf(out, "Starting %s ...\n", step.what)
		if err := step.run(ctx); err != nil {
			return c, fmt.Errorf("starting %s: %w", step.what, err)
		}
		if err := c.state.write(opts.StateDir); err != nil {
			return c, err
		}
	}
	c.state.Ready = true
	return c, c.state.write(opts.StateDir)
}

// step is one part of the cluster to start.
type step struct {
	what string
	run  func(context.Context) error
}

// steps are the parts the options ask for, in the order they start.
func (c *Cluster) steps() []step {
	steps := []step{
		{"etcd and kube-apiserver", c.startAPIServer},
		{"kube-controller-manager and kube-scheduler", c.startComponents},
		{"simulated nodes (kwok)", c.startNodes},
		{"metrics-server (the metrics API)", c.startMetricsServer},
	}
	// Kueue's webhooks must serve before the manager and the demo create
	// anything Kueue would queue.
	if c.opts.Kueue {
		steps = append(steps, step{"Kueue and the queue " + QueueNamespace + "/" + QueueName, c.startKueue})
	}
	if c.opts.runsInference() {
		steps = append(steps, step{"KEDA (it scales the demo's GPU inference)", c.startKEDA})
	}
	steps = append(steps,
		step{"the backfill manager", c.startManager},
		step{"the simulated GPU exporter", c.startGPUSim},
		step{"the simulated online latency", c.startLatencySim},
		step{"the node agents, on simulated cgroups", c.startNodeAgents},
		step{"the alert webhook sink", c.startAlertSink},
		step{"Alertmanager", c.startAlertmanager},
		step{"Prometheus", c.startPrometheus})
	if c.opts.Manager {
		steps = append(steps, step{"reclaimed capacity on every node", c.waitForReclaimedCapacity})
	}
	if c.opts.Demo {
		steps = append(steps, step{"the demo workloads", c.loadDemo})
	}
	return steps
}

// resetStateDir removes what an earlier cluster left in dir, and only that:
// the directory may hold other files of the user's.
func resetStateDir(dir string) error {
	for _, name := range []string{"etcd", "pki", "kwok", "kueue", "prometheus", "alertmanager", "logs", "state.json", "kubeconfig"} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
}

// startChild runs a binary of BinDir with its log under logs/ and records
// it as a component.
func (c *Cluster) startChild(name string, address string, args ...string) error {
	return c.startCommand(name, address, filepath.Join(c.opts.BinDir, name), args...)
}

// startCommand is startChild for any binary: one of BinDir, or a program
// that runs the component (and is known by its name).
func (c *Cluster) startCommand(name, address, binary string, args ...string) error {
	return c.startCommandEnv(name, address, binary, nil, args...)
}

// startChildEnv is startChild with the child's environment (nil: this
// process's).
func (c *Cluster) startChildEnv(name, address string, env []string, args ...string) error {
	return c.startCommandEnv(name, address, filepath.Join(c.opts.BinDir, name), env, args...)
}

func (c *Cluster) startCommandEnv(name, address, binary string, env []string, args ...string) error {
	log := filepath.Join(c.opts.StateDir, "logs", name+".log")
	p, err := process.StartNamed(name, binary, args, env, log)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	c.commands[name] = append([]string{binary}, args...)
	if c.envs == nil {
		c.envs = map[string][]string{}
	}
	c.envs[name] = env
	c.state.Components = append(c.state.Components, Component{Name: name, PID: p.PID(), Address: address, Log: log})
	return nil
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	if err := c.cp.prepare(); err != nil {
		return err
	}
	ports, err := c.freePorts(3)
	if err != nil {
		return err
	}
	etcdAddr := loopback(ports[0])
	if err := c.startChild("etcd", etcdAddr, etcdArgs(c.opts.StateDir, ports[0], ports[1])...); err != nil {
		return err
	}
	if err := waitHealthy(ctx, "http://"+etcdAddr+"/health", "", time.Minute); err != nil {
		return err
	}
	apiAddr := loopback(ports[2])
	if err := c.startChild("kube-apiserver", apiAddr, apiserverArgs(c.opts.StateDir, ports[0], ports[2], c.opts.Gang)...); err != nil {
		return err
	}
	c.cp.server = "https://" + apiAddr
	if err := waitHealthy(ctx, c.cp.server+"/readyz", c.cp.token, 2*time.Minute); err != nil {
		return err
	}
	if err := c.cp.writeKubeconfig(); err != nil {
		return err
	}
	c.state.Kubeconfig, c.state.Server = c.cp.kubeconfig, c.cp.server
	if c.config, err = clientcmd.BuildConfigFromFlags("", c.cp.kubeconfig); err != nil {
		return err
	}
	if c.client, err = client.New(c.config, client.Options{Scheme: scheme()}); err != nil {
		return err
	}
	// The garbage collector learns resource types when it starts: the CRD
	// must exist before the controller-manager does.
	if err := installCRDs(ctx, c.client); err != nil {
		return err
	}
	return installUserRoles(ctx, c.client)
}

func (c *Cluster) startComponents(ctx context.Context) error {
	ports, err := c.freePorts(2)
	if err != nil {
		return err
	}
	if err := c.startChild("kube-controller-manager", loopback(ports[0]), c.cp.controllerManagerArgs(ports[0], c.opts.Gang)...); err != nil {
		return err
	}
	if err := c.startChild("kube-scheduler", loopback(ports[1]), c.cp.componentArgs(ports[1], c.opts.Gang)...); err != nil {
		return err
	}
	for _, port := range ports {
		if err := waitHealthy(ctx, "https://"+loopback(port)+"/healthz", "", time.Minute); err != nil {
			return err
		}
	}
	return waitForDefaultServiceAccount(ctx, c.client)
}

func (c *Cluster) startNodes(ctx context.Context) error {
	for _, spec := range c.nodeSpecs() {
		if err := c.client.Create(ctx, kwok.NodeObject(spec)); err != nil {
			return fmt.Errorf("creating node %s: %w", spec.Name, err)
		}
	}
	k, err := kwok.Start(kwok.Options{
		Binary:     filepath.Join(c.opts.BinDir, "kwok"),
		Kubeconfig: c.cp.kubeconfig,
		StateDir:   filepath.Join(c.opts.StateDir, "kwok"),
		ServeLogs:  true,
	})
	if err != nil {
		return err
	}
	c.kwok = k
	c.state.Components = append(c.state.Components, Component{Name: "kwok", PID: k.PID(), Address: k.Address(), Log: k.LogPath()})
	return waitNodesReady(ctx, c.client, len(c.nodeSpecs()))
}

func (c *Cluster) startManager(ctx context.Context) error {
	if err := writeReportCerts(c.reportCertDir()); err != nil {
		return err
	}
	sctx, stopSim := context.WithCancel(context.Background())
	c.stopSim = stopSim
	go simulateTraining(sctx, c.config, c.opts.TrainingDuration, filepath.Join(c.opts.StateDir, "kwok", "podlogs"))
	c.state.ManagerFlags, c.state.ManagersFile = c.ManagerFlags(), c.managersFile()
	if !c.opts.Manager {
		fmt.Fprintf(c.out, "No manager runs in the cluster (--manager=false): start one with `backfill manager --kubeconfig %s %s`\n",
			c.cp.kubeconfig, strings.Join(c.ManagerFlags(), " "))
		return writeManagerTargets(c.managersFile(), []string{externalManagerMetrics})
	}
	port, err := c.freePorts(1)
	if err != nil {
		return err
	}
	opts := c.managerOptions(loopback(port[0]))
	if err := writeManagerTargets(c.managersFile(), []string{opts.MetricsAddress}); err != nil {
		return err
	}
	mctx, cancel := context.WithCancel(context.Background())
	c.stopManager, c.managerDone = cancel, make(chan error, 1)
	go func() { c.managerDone <- manager.RunWithConfig(mctx, c.config, opts) }()
	c.state.Components = append(c.state.Components, Component{Name: "backfill-manager", PID: os.Getpid(), Address: opts.MetricsAddress})
	return waitHTTP(ctx, "http://"+opts.MetricsAddress+"/metrics", time.Minute)
}

// externalManagerMetrics is where `backfill manager` serves its metrics by
// default; Prometheus looks there when no manager runs in the cluster.
const externalManagerMetrics = "127.0.0.1:8080"

func (c *Cluster) startGPUSim(ctx context.Context) error {
	return c.serveSimulator(ctx, "gpu-exporter-simulator", gpusim.MetricsPath, func(addr string) *http.Server {
		return gpusim.NewServer(addr, gpusim.ClientLister{Reader: c.client})
	})
}

// latencySeed seeds the simulated online latency: the same for every
// cluster, so that a day under the same load draws the same requests.
const latencySeed = 1

func (c *Cluster) startLatencySim(ctx context.Context) error {
	return c.serveSimulator(ctx, "online-latency-simulator", latencysim.MetricsPath, func(addr string) *http.Server {
		return latencysim.NewServer(addr, gpusim.ClientLister{Reader: c.client}, latencySeed)
	})
}

// serveSimulator serves a simulator of this process on a free loopback
// port, records it as the component name and waits for its metrics.
func (c *Cluster) serveSimulator(ctx context.Context, name, metricsPath string, newServer func(addr string) *http.Server) error {
	port, err := c.freePorts(1)
	if err != nil {
		return err
	}
	addr := loopback(port[0])
	srv := newServer(addr)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }() // ends with Shutdown
	c.servers = append(c.servers, srv)
	c.state.Components = append(c.state.Components, Component{Name: name, PID: os.Getpid(), Address: addr})
	return waitHTTP(ctx, "http://"+addr+metricsPath, 30*time.Second)
}

// Stop ends every part of the cluster, newest first, each child by the PID
// recorded at its start, and marks the state directory stopped.
func (c *Cluster) Stop() []error {
	c.mu.Lock()
	c.stopping = true
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	// Prometheus and Alertmanager first, so that neither reports the
	// servers of this process going away as an outage, and the sink
	// outlives the Alertmanager that sends to it.
	observers := func(p *process.Process) bool { return p.Name() == "prometheus" || p.Name() == componentAlertmanager }
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		if observers(procs[i]) {
			errs = append(errs, procs[i].Stop(stopTimeout))
		}
	}
	for _, srv := range c.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, srv.Shutdown(ctx))
		cancel()
	}
	if c.stopDemo != nil {
		c.stopDemo()
	}
	if c.stopSim != nil {
		c.stopSim()
	}
	if c.stopManager != nil {
		c.stopManager()
		errs = append(errs, <-c.managerDone)
	}
	errs = append(errs, c.kwok.Stop())
	for i := len(procs) - 1; i >= 0; i-- {
		if !observers(procs[i]) {
			errs = append(errs, procs[i].Stop(stopTimeout))
		}
	}
	_ = os.Remove(statePath(c.opts.StateDir))
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	return failed
}

// Done receives the name of a child process that exited on its own, which
// ends the cluster's usefulness; under RestartComponents only once the
// child exited too often to be restarted.
func (c *Cluster) Done() <-chan string {
	died := make(chan string, 1)
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	for _, p := range procs {
		go func() {
			if c.opts.RestartComponents {
				p = c.keepRunning(p)
			} else {
				<-p.Done()
			}
			select {
			case died <- p.Name():
			default:
			}
		}()
	}
	if c.kwok != nil {
		go func() {
			<-c.kwok.Done()
			select {
			case died <- "kwok":
			default:
			}
		}()
	}
	return died
}

// scheme knows the core types, TFJob and CRDs.
func scheme() *runtime.Scheme {
	s := manager.Scheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}

// State is the cluster's recorded state.
func (c *Cluster) State() *State { return c.state }

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// waitHTTP polls a plain http URL until it answers 200.
func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	return waitHealthy(ctx, url, "", timeout)
}
