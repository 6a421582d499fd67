//go:build integration

package install

import (
	"fmt"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/test/framework"
)

// No network plugin runs beside the test apiserver, so nothing enforces a
// NetworkPolicy here. These tests read the manager's policy as a plugin
// would (ingressAllows below follows the NetworkPolicy API's rules), and
// show that the apiserver accepts and keeps it; that a plugin enforces it
// is the plugin's part.

// source is a client pod: its namespace, the namespace's labels and its
// own.
type source struct {
	namespace string
	nsLabels  map[string]string
	labels    map[string]string
}

// A pod the operator created, in a team's namespace, and pods that are not.
var (
	trainingPod = source{namespace: "team-a", labels: map[string]string{"training.kubeflow.org/operator-name": "tfjob-controller", "training.kubeflow.org/job-name": "mnist"}}
	teamPod     = source{namespace: "team-a", labels: map[string]string{"app": "notebook"}}
	otherJobPod = source{namespace: "team-a", labels: map[string]string{"training.kubeflow.org/operator-name": "pytorchjob-controller"}}
	neighbour   = source{namespace: namespace, labels: map[string]string{"app": "something-else"}}
	prometheus  = source{namespace: "monitoring", labels: map[string]string{"app.kubernetes.io/name": "prometheus"}}
)

// The policy selects the manager's pods; on every port of the Deployment
// but the report port any client is let in, as without the policy; the
// report port lets in training pods of any namespace and nothing else.
func TestNetworkPolicyAllows(t *testing.T) {
	renderings := map[string]func(t *testing.T) []byte{
		"chart default": func(t *testing.T) []byte { return helmTemplate(t, valueSets["default"]) },
		"chart with other ports": func(t *testing.T) []byte {
			return helmTemplate(t, valueSets["default"], "--set", "manager.metricsPort=9090", "--set", "manager.healthPort=9091", "--set", "reports.port=10443")
		},
		"chart without reports": func(t *testing.T) []byte {
			return helmTemplate(t, valueSets["default"], "--set", "reports.enabled=false")
		},
		"kustomize config/default": func(t *testing.T) []byte {
			return kustomize(t, filepath.Join(framework.RepoRoot(), "config", "default"))
		},
	}
	for name, render := range renderings {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t))
			np := networkPolicyOf(t, objs)
			checkManagerPolicy(t, np, deploymentOf(t, objs))
		})
	}
}

// networkPolicy.enabled=false renders none.
func TestNetworkPolicyOff(t *testing.T) {
	for _, o := range decode(t, helmTemplate(t, valueSets["default"], "--set", "networkPolicy.enabled=false")) {
		if o.GetKind() == "NetworkPolicy" {
			t.Errorf("networkPolicy.enabled=false rendered NetworkPolicy %s", o.GetName())
		}
	}
}

// The apiserver accepts the policy and keeps it as rendered: read back,
// it allows and refuses the same clients.
func TestNetworkPolicyAccepted(t *testing.T) {
	if err := clusterReady(); err != nil {
		t.Fatal(err)
	}
	rendered := decode(t, helmTemplate(t, valueSets["default"]))
	apply(t, helmTemplate(t, valueSets["default"], "--show-only", "templates/networkpolicy.yaml"))
	want := networkPolicyOf(t, rendered)
	got := &networkingv1.NetworkPolicy{}
	if err := apiServer.Client.Get(ctx(t), client.ObjectKeyFromObject(want), got); err != nil {
		t.Fatalf("Reading back NetworkPolicy %s: %v", want.Name, err)
	}
	checkManagerPolicy(t, got, deploymentOf(t, rendered))
}

// checkManagerPolicy checks what np lets reach the pods of the manager's
// Deployment.
func checkManagerPolicy(t *testing.T, np *networkingv1.NetworkPolicy, deploy *appsv1.Deployment) {
	t.Helper()
	pod := deploy.Spec.Template.Labels
	if !selects(t, np, pod) {
		t.Fatalf("NetworkPolicy %s does not select the manager's pods (labels %v)", np.Name, pod)
	}
	if !hasPolicyType(np, networkingv1.PolicyTypeIngress) || hasPolicyType(np, networkingv1.PolicyTypeEgress) {
		t.Errorf("policyTypes %v, want Ingress only: the manager's own connections stay open", np.Spec.PolicyTypes)
	}
	ports := containerPorts(deploy)
	if len(ports) == 0 {
		t.Fatal("The manager container has no ports")
	}
	for portName, port := range ports {
		for name, src := range map[string]source{"a training pod": trainingPod, "a team's other pod": teamPod,
			"a PyTorchJob's pod": otherJobPod, "another pod of the manager's namespace": neighbour, "Prometheus": prometheus} {
			want := portName != "reports" || src.labels["training.kubeflow.org/operator-name"] == "tfjob-controller"
			if got := ingressAllows(t, np, ports, port, src); got != want {
				t.Errorf("%s reaches port %s (%d): %v, want %v", name, portName, port, got, want)
			}
		}
	}
	if _, ok := ports["reports"]; !ok {
		// Without reports nothing may reach a port the manager does not
		// serve.
		for _, port := range []int32{9443, 10443} {
			if ingressAllows(t, np, ports, port, trainingPod) {
				t.Errorf("Without reports a training pod still reaches port %d", port)
			}
		}
	}
}

// ingressAllows says whether np, which selects the destination pod, lets
// src reach it on TCP port, by the NetworkPolicy API's rules: a rule
// matches when one of its ports does (no ports: all) and one of its peers
// does (no peers: every source). A peer's namespaceSelector picks
// namespaces (none: the policy's own) and its podSelector pods in them
// (none: all). ipBlock peers match no pod here.
func ingressAllows(t *testing.T, np *networkingv1.NetworkPolicy, named map[string]int32, port int32, src source) bool {
	t.Helper()
	for _, rule := range np.Spec.Ingress {
		if portMatches(rule.Ports, named, port) && peerMatches(t, np, rule.From, src) {
			return true
		}
	}
	return false
}

func portMatches(ports []networkingv1.NetworkPolicyPort, named map[string]int32, port int32) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.StrVal != "" && named[p.Port.StrVal] == port:
			return true
		case p.Port.IntVal == port && (p.EndPort == nil || *p.EndPort == port):
			return true
		case p.EndPort != nil && p.Port.IntVal <= port && port <= *p.EndPort:
			return true
		}
	}
	return false
}

func peerMatches(t *testing.T, np *networkingv1.NetworkPolicy, peers []networkingv1.NetworkPolicyPeer, src source) bool {
	t.Helper()
	if len(peers) == 0 {
		return true
	}
	nsLabels := map[string]string{corev1.LabelMetadataName: src.namespace}
	for k, v := range src.nsLabels {
		nsLabels[k] = v
	}
	for _, peer := range peers {
		if peer.IPBlock != nil || (peer.NamespaceSelector == nil && peer.PodSelector == nil) {
			continue
		}
		nsOK := src.namespace == np.Namespace
		if peer.NamespaceSelector != nil {
			nsOK = selectorMatches(t, peer.NamespaceSelector, nsLabels)
		}
		podOK := peer.PodSelector == nil || selectorMatches(t, peer.PodSelector, src.labels)
		if nsOK && podOK {
			return true
		}
	}
	return false
}

func selects(t *testing.T, np *networkingv1.NetworkPolicy, podLabels map[string]string) bool {
	return selectorMatches(t, &np.Spec.PodSelector, podLabels)
}

func selectorMatches(t *testing.T, sel *metav1.LabelSelector, set map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("Label selector %v: %v", sel, err)
	}
	return s.Matches(labels.Set(set))
}

func hasPolicyType(np *networkingv1.NetworkPolicy, want networkingv1.PolicyType) bool {
	for _, pt := range np.Spec.PolicyTypes {
		if pt == want {
			return true
		}
	}
	return false
}

// containerPorts are the ports of the manager's containers, by name.
func containerPorts(deploy *appsv1.Deployment) map[string]int32 {
	ports := map[string]int32{}
	for _, c := range deploy.Spec.Template.Spec.Containers {
		for i, p := range c.Ports {
			name := p.Name
			if name == "" {
				name = fmt.Sprintf("%s[%d]", c.Name, i)
			}
			ports[name] = p.ContainerPort
		}
	}
	return ports
}

// networkPolicyOf is the manager's one NetworkPolicy of a rendering.
func networkPolicyOf(t *testing.T, objs []*unstructured.Unstructured) *networkingv1.NetworkPolicy {
	t.Helper()
	np := &networkingv1.NetworkPolicy{}
	oneOf(t, ofComponent(objs, "manager"), "NetworkPolicy", np)
	return np
}

// ofComponent are the objects labelled app.kubernetes.io/component:
// component (manager, node-agent).
func ofComponent(objs []*unstructured.Unstructured, component string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetLabels()["app.kubernetes.io/component"] == component {
			out = append(out, o)
		}
	}
	return out
}

// deploymentOf is the one Deployment of a rendering.
func deploymentOf(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	oneOf(t, objs, "Deployment", d)
	return d
}

// oneOf converts the one object of kind in objs into into.
func oneOf(t *testing.T, objs []*unstructured.Unstructured, kind string, into any) {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d objects of kind %s rendered, want 1", len(found), kind)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(found[0].Object, into); err != nil {
		t.Fatalf("Converting %s %s: %v", kind, found[0].GetName(), err)
	}
}
