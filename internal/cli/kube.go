package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/manager"
)

// kubeFlags are kubectl's connection flags (--kubeconfig, --context,
// -n/--namespace, --server, --token, …), so that the commands behave as
// kubectl does when run as the plugin `kubectl backfill`.
type kubeFlags struct {
	config *genericclioptions.ConfigFlags
}

// addKubeFlags adds kubectl's connection flags to cmd.
func addKubeFlags(cmd *cobra.Command) *kubeFlags {
	k := &kubeFlags{config: genericclioptions.NewConfigFlags(true)}
	k.config.AddFlags(cmd.Flags())
	return k
}

// kube is a connection to the cluster the flags name.
type kube struct {
	config *rest.Config
	// client reads and writes typed objects, TFJobs included.
	client client.Client
	// clientset is for what the controller-runtime client cannot do:
	// logs and events by field selector.
	clientset kubernetes.Interface
	// namespace is -n, else the kubeconfig context's, else "default".
	namespace string
}

// connect builds the clients; it talks to no server yet.
func (k *kubeFlags) connect() (*kube, error) {
	cfg, err := k.config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ns, _, err := k.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return &kube{config: cfg, client: c, clientset: cs, namespace: ns}, nil
}
