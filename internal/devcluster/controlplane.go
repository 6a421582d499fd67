package devcluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/backfill-dev/backfill/internal/devcluster/metricsserver"
)

// controlPlane is the local cluster's etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, each a child process on
// loopback ports chosen free.
type controlPlane struct {
	dir        string
	server     string // https://127.0.0.1:PORT
	token      string
	kubeconfig string
}

// prepare writes the control plane's secrets: a service-account key pair,
// an admin token and the kubeconfig that uses it.
func (cp *controlPlane) prepare() error {
	pki := filepath.Join(cp.dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(pki, "sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return err
	}
	if err := writePEM(filepath.Join(pki, "sa.pub"), "PUBLIC KEY", pub); err != nil {
		return err
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	cp.token = hex.EncodeToString(secret)
	line := cp.token + ",admin,admin,system:masters\n"
	if err := os.WriteFile(filepath.Join(pki, "tokens.csv"), []byte(line), 0o600); err != nil {
		return err
	}
	// The aggregation layer's front proxy, which metrics-server trusts.
	if _, err := metricsserver.WriteFrontProxy(pki); err != nil {
		return fmt.Errorf("writing the front-proxy certificates: %w", err)
	}
	return nil
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

// writeKubeconfig writes the admin kubeconfig of the local cluster.
func (cp *controlPlane) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["backfill-dev"] = &clientcmdapi.Cluster{Server: cp.server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cp.token}
	cfg.Contexts["backfill-dev"] = &clientcmdapi.Context{Cluster: "backfill-dev", AuthInfo: "admin"}
	cfg.CurrentContext = "backfill-dev"
	cp.kubeconfig = filepath.Join(cp.dir, "kubeconfig")
	return clientcmd.WriteToFile(*cfg, cp.kubeconfig)
}

func etcdArgs(dir string, client, peer int) []string {
	c := "http://127.0.0.1:" + strconv.Itoa(client)
	p := "http://127.0.0.1:" + strconv.Itoa(peer)
	return []string{
		"--name=backfill-dev", "--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + c, "--advertise-client-urls=" + c,
		"--listen-peer-urls=" + p, "--initial-advertise-peer-urls=" + p,
		"--initial-cluster=backfill-dev=" + p,
		"--unsafe-no-fsync=true", "--log-level=warn",
	}
}

// gangGate turns on Kubernetes' gang scheduling: PodGroups in the
// apiserver, the GangScheduling plugin in the scheduler, and the
// controller-manager's PodGroup finalizer handling.
const gangGate = "--feature-gates=GenericWorkload=true"

func apiserverArgs(dir string, etcdPort, port int, gang bool) []string {
	pki := filepath.Join(dir, "pki")
	var gates []string
	if gang {
		gates = []string{gangGate, "--runtime-config=scheduling.k8s.io/v1beta1=true"}
	}
	return append(append(gates,
		"--etcd-servers=http://127.0.0.1:"+strconv.Itoa(etcdPort),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		// A loopback advertise address is refused by the default reconciler.
		"--endpoint-reconciler-type=none",
		"--cert-dir="+pki,
		"--token-auth-file="+filepath.Join(pki, "tokens.csv"),
		"--authorization-mode=Node,RBAC", "--anonymous-auth=false",
		"--service-account-key-file="+filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(pki, "sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
	), metricsserver.FrontProxyIn(pki).APIServerFlags()...)
}

// componentArgs are the flags kube-controller-manager and kube-scheduler
// share: the admin kubeconfig for everything, loopback serving.
func (cp *controlPlane) componentArgs(port int, gang bool) []string {
	var gates []string
	if gang {
		gates = []string{gangGate}
	}
	return append(gates,
		"--kubeconfig="+cp.kubeconfig,
		"--authentication-kubeconfig="+cp.kubeconfig,
		"--authorization-kubeconfig="+cp.kubeconfig,
		"--authentication-skip-lookup=true",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--leader-elect=false",
	)
}

func (cp *controlPlane) controllerManagerArgs(port int, gang bool) []string {
	return append(cp.componentArgs(port, gang),
		"--service-account-private-key-file="+filepath.Join(cp.dir, "pki", "sa.key"),
		"--root-ca-file="+filepath.Join(cp.dir, "pki", "apiserver.crt"),
		"--use-service-account-credentials=true",
		// Node IPAM needs a pod CIDR per node; kwok assigns pod IPs itself.
		"--controllers=*,-node-ipam-controller",
		// The HPA KEDA makes of the GPU inference's ScaledObject follows
		// the compressed day within seconds, not the default 15.
		"--horizontal-pod-autoscaler-sync-period=5s",
	)
}

// waitHealthy polls an https health endpoint until it answers 200.
func waitHealthy(ctx context.Context, url, token string, timeout time.Duration) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback, self-signed
	}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("health endpoint %s: %w", url, err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not healthy after %v: %w", url, timeout, last)
}
