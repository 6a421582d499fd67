package kwok

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// Options say how to run kwok.
type Options struct {
	// Binary is the kwok executable, normally bin/kwok, which `make tools`
	// builds from hack/tools/kwok.
	Binary string
	// Kubeconfig is a kubeconfig file with rights to nodes, pods, leases and
	// events, e.g. a system:masters user's.
	Kubeconfig string
	// StateDir receives kwok.yaml (the configuration), kwok.log and kwok's
	// work directory. It is created if missing.
	StateDir string
	// CIDR is the range pod IPs come from; empty means 10.244.0.0/16.
	CIDR string
	// NodeLeaseDurationSeconds is the duration of the nodes' Leases in
	// kube-node-lease, renewed every quarter of it; 0 means 40 (the kubelet's
	// default). A restarted kwok manages a node only once the previous
	// process's Lease on it has expired.
	NodeLeaseDurationSeconds int
	// StartTimeout bounds the wait for kwok to serve; 0 means 30 s.
	StartTimeout time.Duration
	// ServeLogs makes kwok serve container logs to the apiserver
	// (`kubectl logs`) from the files that Logs objects name (see
	// LogsObject): Start installs kwok's Logs CRD first.
	ServeLogs bool
}

// Kwok is a running kwok, stopped by its recorded PID.
type Kwok struct {
	proc    *process.Process
	address string
}

// stopTimeout is how long Stop waits after SIGTERM before it kills.
const stopTimeout = 10 * time.Second

// Start writes the configuration into opts.StateDir and runs kwok on
// loopback, managing the nodes annotated kwok.x-k8s.io/node=fake. It
// returns once kwok serves, or fails (and leaves nothing running) when kwok
// exits or does not serve within opts.StartTimeout.
func Start(opts Options) (*Kwok, error) {
	if opts.Binary == "" || opts.Kubeconfig == "" || opts.StateDir == "" {
		return nil, errors.New("kwok: Binary, Kubeconfig and StateDir are required")
	}
	if _, err := os.Stat(opts.Binary); err != nil {
		return nil, fmt.Errorf("kwok is missing: run `make tools` (it builds bin/kwok among the rest): %w", err)
	}
	workDir := filepath.Join(opts.StateDir, "workdir")
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating kwok's state directory: %w", err)
	}
	configPath := filepath.Join(opts.StateDir, "kwok.yaml")
	if err := os.WriteFile(configPath, Config(), 0o644); err != nil {
		return nil, fmt.Errorf("writing kwok's configuration: %w", err)
	}
	ports, err := process.FreePorts(1)
	if err != nil {
		return nil, err
	}
	port := ports[0]
	address := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	if opts.ServeLogs {
		if err := installLogsCRD(opts.Kubeconfig, timeout); err != nil {
			return nil, err
		}
	}

	// kwok always loads $KWOK_WORKDIR/kwok.yaml (default ~/.kwok) in
	// addition to --config; point it at our own directory so that a
	// developer's personal kwok setup cannot change the simulation.
	env := append(os.Environ(), "KWOK_WORKDIR="+workDir)
	proc, err := process.Start(opts.Binary, kwokArgs(opts, configPath, port), env, filepath.Join(opts.StateDir, "kwok.log"))
	if err != nil {
		return nil, err
	}
	k := &Kwok{proc: proc, address: address}
	if err := k.waitServing(timeout); err != nil {
		_ = proc.Stop(stopTimeout)
		return nil, fmt.Errorf("%w (see %s)", err, proc.LogPath())
	}
	return k, nil
}

// kwokArgs are kwok's flags: everything on loopback, one port for the API
// and the nodes' kubelet endpoint.
func kwokArgs(opts Options, configPath string, port int) []string {
	cidr := opts.CIDR
	if cidr == "" {
		cidr = "10.244.0.0/16"
	}
	lease := opts.NodeLeaseDurationSeconds
	if lease == 0 {
		lease = 40
	}
	args := []string{
		"--kubeconfig=" + opts.Kubeconfig,
		"--config=" + configPath,
		"--manage-nodes-with-annotation-selector=" + ManagedNodeAnnotation + "=" + ManagedNodeValue,
		"--server-address=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		// Every node's kubelet endpoint is kwok's own server, so that
		// scraping or proxying to a node's IP and port reaches its metrics.
		"--node-ip=127.0.0.1",
		"--node-port=" + strconv.Itoa(port),
		"--cidr=" + cidr,
		"--node-lease-duration-seconds=" + strconv.Itoa(lease),
	}
	if opts.ServeLogs {
		args = append(args, "--enable-crds=Logs")
	}
	return args
}

// waitServing polls /healthz, which kwok serves once its controllers run.
func (k *Kwok) waitServing(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.URL("/healthz"), nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-k.proc.Done():
			if err := k.proc.Wait(); err != nil {
				return fmt.Errorf("kwok exited while starting: %w", err)
			}
			return errors.New("kwok exited while starting")
		case <-ctx.Done():
			return fmt.Errorf("kwok did not serve on %s within %s", k.address, timeout)
		case <-tick.C:
		}
	}
}

// Stop sends SIGTERM to kwok's PID and kills it if it has not exited after
// 10 s. The simulated nodes stay in the apiserver; their Leases expire.
func (k *Kwok) Stop() error {
	if k == nil {
		return nil
	}
	return k.proc.Stop(stopTimeout)
}

// PID is kwok's process id.
func (k *Kwok) PID() int { return k.proc.PID() }

// Done is closed when kwok has exited.
func (k *Kwok) Done() <-chan struct{} { return k.proc.Done() }

// LogPath is the file holding kwok's output.
func (k *Kwok) LogPath() string { return k.proc.LogPath() }

// Address is kwok's server, host:port on 127.0.0.1, plain HTTP.
func (k *Kwok) Address() string { return k.address }

// URL is the http URL of path on kwok's server.
func (k *Kwok) URL(path string) string { return "http://" + k.address + path }

// ResourceMetricsURL is where the emulated kubelet of nodeName serves its
// /metrics/resource (config/metrics-resource.yaml).
func (k *Kwok) ResourceMetricsURL(nodeName string) string {
	return k.URL("/metrics/nodes/" + nodeName + "/metrics/resource")
}
