package kwok

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// logsCRD is kwok's Logs CRD. A Logs object named like a pod tells kwok
// which file holds that pod's container log; the apiserver reaches kwok for
// `kubectl logs` as it would a kubelet (the node's InternalIP and kubelet
// port are kwok's own server).
//
//go:embed crd/logs.yaml
var logsCRD []byte

// LogsResource is kwok's Logs resource, one object per pod.
var LogsResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}

// installLogsCRD creates kwok's Logs CRD unless it exists and waits until
// it is served, so that kwok's watch on Logs objects starts cleanly.
func installLogsCRD(kubeconfig string, timeout time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(logsCRD, crd); err != nil {
		return fmt.Errorf("decoding kwok's Logs CRD: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("installing kwok's Logs CRD: %w", err)
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for kwok's Logs CRD to be established: %w", err)
	}
	return nil
}

// LogsObject is the Logs object that makes kwok serve file as the log of
// every container of the pod, owned by the pod so that it goes with it.
func LogsObject(namespace, pod, podUID, file string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": LogsResource.GroupVersion().String(),
		"kind":       "Logs",
		"metadata": map[string]any{
			"name":      pod,
			"namespace": namespace,
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": podUID,
			}},
		},
		"spec": map[string]any{
			// A restarted container prints the same: its previous log
			// (kubectl logs --previous) is the same file.
			"logs": []any{map[string]any{"logsFile": file, "previousLogsFile": file, "follow": true}},
		},
	}}
	return obj
}

// LogLine is one line of a container log in the CRI format kwok reads
// (the kubelet's): timestamp, stream, full-line tag, text.
func LogLine(at time.Time, text string) string {
	return at.UTC().Format(time.RFC3339Nano) + " stdout F " + text + "\n"
}
