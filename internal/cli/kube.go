package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/manager"
)

// kubeFlags are kubectl's connection flags (--kubeconfig, --context,
// -n/--namespace, -s/--server, --token, …), so that the commands behave as
// kubectl does when run as the plugin `kubectl backfill`. They are
// client-go's own, not kubectl's library: that one links kustomize and
// Go's plugin loader, which keep every symbol of the binary.
type kubeFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides clientcmd.ConfigOverrides
}

// addKubeFlags adds kubectl's connection flags to cmd.
func addKubeFlags(cmd *cobra.Command) *kubeFlags {
	k := &kubeFlags{rules: clientcmd.NewDefaultClientConfigLoadingRules()}
	fs := cmd.Flags()
	fs.StringVar(&k.rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use for CLI requests.")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	names.ClusterOverrideFlags.APIServer.ShortName = "s"
	clientcmd.BindOverrideFlags(&k.overrides, fs, names)
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
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.rules, &k.overrides)
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ns, _, err := loader.Namespace()
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
