package kueue

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"
)

// TFJobFramework is the name Kueue's configuration gives its TFJob
// integration, off unless integrations.frameworks lists it.
const TFJobFramework = "kubeflow.org/tfjob"

// WaitForPodsReady turns on Kueue's all-or-nothing admission: a job whose
// pods are not all running within Timeout of admission is evicted and
// requeued, after a backoff starting at Backoff.
type WaitForPodsReady struct {
	Timeout time.Duration
	Backoff time.Duration
}

// configuration is the part of Kueue's Configuration
// (config.kueue.x-k8s.io/v1beta2) the local runs set.
type configuration struct {
	APIVersion             string            `json:"apiVersion"`
	Kind                   string            `json:"kind"`
	Health                 map[string]string `json:"health"`
	Metrics                map[string]string `json:"metrics"`
	Webhook                map[string]any    `json:"webhook"`
	LeaderElection         map[string]bool   `json:"leaderElection"`
	InternalCertManagement map[string]bool   `json:"internalCertManagement"`
	Integrations           map[string]any    `json:"integrations"`
	WaitForPodsReady       map[string]any    `json:"waitForPodsReady,omitempty"`
}

// writeConfig writes Kueue's configuration into dir: the TFJob integration
// on; health and webhooks on loopback with our own certificate; no leader
// election (one replica) and no metrics server (nobody scrapes it here).
func writeConfig(dir string, o Options, healthPort, webhookPort int, certDir string) (string, error) {
	cfg := configuration{
		APIVersion:             "config.kueue.x-k8s.io/v1beta2",
		Kind:                   "Configuration",
		Health:                 map[string]string{"healthProbeBindAddress": fmt.Sprintf("127.0.0.1:%d", healthPort)},
		Metrics:                map[string]string{"bindAddress": "0"},
		Webhook:                map[string]any{"host": "127.0.0.1", "port": webhookPort, "certDir": certDir},
		LeaderElection:         map[string]bool{"leaderElect": false},
		InternalCertManagement: map[string]bool{"enable": false},
		Integrations:           map[string]any{"frameworks": []string{TFJobFramework}},
	}
	if w := o.WaitForPodsReady; w != nil {
		cfg.WaitForPodsReady = map[string]any{
			"timeout":        w.Timeout.String(),
			"blockAdmission": false,
			"requeuingStrategy": map[string]any{
				"timestamp":          "Eviction",
				"backoffBaseSeconds": max(1, int(w.Backoff.Seconds())),
				"backoffMaxSeconds":  max(1, int(4*w.Backoff.Seconds())),
			},
		}
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kueue-config.yaml")
	return path, os.WriteFile(path, data, 0o600)
}
