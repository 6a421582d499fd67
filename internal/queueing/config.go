package queueing

import (
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"
)

// Where Kueue's standard install (its kustomize manifests and its Helm
// chart with the release name kueue) keeps its configuration file.
const (
	ConfigNamespace = "kueue-system"
	ConfigMapName   = "kueue-manager-config"
	ConfigKey       = "controller_manager_config.yaml"
)

// TFJobFramework is the name of Kueue's TFJob integration in its
// configuration's integrations.frameworks.
const TFJobFramework = "kubeflow.org/tfjob"

// defaultFrameworks is what Kueue manages when its configuration lists no
// framework.
var defaultFrameworks = []string{"batch/job"}

// Frameworks is the integrations.frameworks list of a Kueue
// configuration file: the kinds of job Kueue suspends and admits.
func Frameworks(config string) ([]string, error) {
	var cfg struct {
		Integrations struct {
			Frameworks []string `json:"frameworks"`
		} `json:"integrations"`
	}
	if err := yaml.Unmarshal([]byte(config), &cfg); err != nil {
		return nil, fmt.Errorf("reading Kueue's configuration: %w", err)
	}
	if len(cfg.Integrations.Frameworks) == 0 {
		return slices.Clone(defaultFrameworks), nil
	}
	return cfg.Integrations.Frameworks, nil
}
