//go:build integration

package install

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/nodeagent"
	"github.com/backfill-dev/backfill/test/framework"
)

// customNodeAgentNamespace is where the custom value set runs the node
// agent: a namespace the chart does not create.
const customNodeAgentNamespace = "node-agents"

// nodeAgentFlagsSet are the flags every install passes: where it runs and
// listens, which pods are offline, and every setting.
var nodeAgentFlagsSet = []string{"node-name", "metrics-bind-address", "health-probe-bind-address", "cgroup-root",
	"proc-root", "kubelet-cgroup-root", "offline-priority-class", "interval", "cpu-threshold", "cpu-floor",
	"cpu-growth", "cpu-idle", "cpu-activation", "cpu-activation-band", "cpu-release-ticks", "memory-threshold", "log-level", "log-format"}

// nodeAgentRules are the agent's permissions, no more.
var nodeAgentRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "patch", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
	{APIGroups: []string{"kubeflow.org"}, Resources: []string{"tfjobs"}, Verbs: []string{"get", "list"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// The node agent's DaemonSet, in the chart (default and custom values) and
// in config/default, runs the manager's image as `backfill node-agent` with
// exactly the privileges docs/install.md lists: the node's PID namespace,
// user 0 with every capability dropped, no privilege or escalation, a
// read-only root filesystem, and the node's /sys/fs/cgroup read-write at
// the same path; its node's name from spec.nodeName; only flags the
// command has, each of its type, every setting among them; probes and metrics on the ports it listens on;
// in a namespace of its own, bound to exactly its ClusterRole.
func TestNodeAgentDaemonSet(t *testing.T) {
	// The installs' defaults are the agent's own, which make
	// bench-interference chose.
	tests := map[string]struct {
		render   func(t *testing.T) []byte
		wantNS   string
		wantArgs []string
	}{
		"chart default": {
			render:   func(t *testing.T) []byte { return helmTemplate(t, valueSets["default"]) },
			wantNS:   nodeAgentNamespace,
			wantArgs: append(agentDefaults(), "--kubelet-cgroup-root=/", "--offline-priority-class=backfill-offline"),
		},
		"chart custom": {
			render: func(t *testing.T) []byte { return helmTemplate(t, valueSets["custom"]) },
			wantNS: customNodeAgentNamespace,
			wantArgs: []string{"--interval=500ms", "--cpu-threshold=80", "--cpu-floor=5", "--cpu-growth=20",
				"--memory-threshold=0", "--kubelet-cgroup-root=/kubelet", "--offline-priority-class=batch-low", "--log-level=debug"},
		},
		"kustomize config/default": {
			render: func(t *testing.T) []byte {
				return kustomize(t, filepath.Join(framework.RepoRoot(), "config", "default"))
			},
			wantNS:   nodeAgentNamespace,
			wantArgs: append(agentDefaults(), "--kubelet-cgroup-root=/", "--offline-priority-class=backfill-offline"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, tc.render(t))
			ds := daemonSetOf(t, objs)
			if ds.Namespace != tc.wantNS || ds.Namespace == namespace {
				t.Errorf("The DaemonSet is in namespace %q, want %q (never the manager's, which is restricted)", ds.Namespace, tc.wantNS)
			}
			checkNodeAgentPod(t, &ds.Spec.Template.Spec, deploymentOf(t, objs))
			args := ds.Spec.Template.Spec.Containers[0].Args
			for _, want := range tc.wantArgs {
				if !slices.Contains(args, want) {
					t.Errorf("The agent's args %q lack %s", args, want)
				}
			}
			if !selectorMatches(t, ds.Spec.Selector, ds.Spec.Template.Labels) {
				t.Errorf("The DaemonSet's selector %v does not select its pods %v", ds.Spec.Selector, ds.Spec.Template.Labels)
			}
			if ru := ds.Spec.UpdateStrategy.RollingUpdate; ru == nil || ru.MaxSurge == nil || ru.MaxSurge.IntValue() != 0 {
				t.Errorf("The update strategy %+v, want no surge: two agents on a node would undo each other's ceilings", ds.Spec.UpdateStrategy)
			}
			checkNodeAgentIdentity(t, objs, ds)
		})
	}
}

// checkNodeAgentPod checks the agent's pod against the manager's
// Deployment.
func checkNodeAgentPod(t *testing.T, pod *corev1.PodSpec, manager *appsv1.Deployment) {
	t.Helper()
	if !pod.HostPID || pod.HostNetwork || pod.HostIPC {
		t.Errorf("hostPID %v, hostNetwork %v, hostIPC %v; want the node's PID namespace only", pod.HostPID, pod.HostNetwork, pod.HostIPC)
	}
	psc := pod.SecurityContext
	if psc == nil || ptr.Deref(psc.RunAsUser, -1) != 0 || ptr.Deref(psc.RunAsNonRoot, true) {
		t.Errorf("The pod's securityContext %+v, want runAsUser 0 and runAsNonRoot false", psc)
	}
	if len(pod.Containers) != 1 || len(pod.InitContainers) != 0 {
		t.Fatalf("%d containers and %d init containers, want the agent alone", len(pod.Containers), len(pod.InitContainers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("The agent container has no securityContext")
	case sc.Privileged == nil || *sc.Privileged:
		t.Errorf("privileged %v, want false", sc.Privileged)
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Errorf("allowPrivilegeEscalation %v, want false", sc.AllowPrivilegeEscalation)
	case !ptr.Deref(sc.ReadOnlyRootFilesystem, false):
		t.Error("The root filesystem is writable, want read-only")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0:
		t.Errorf("capabilities %+v, want every one dropped and none added", sc.Capabilities)
	case sc.RunAsUser != nil || sc.RunAsNonRoot != nil:
		t.Errorf("The container overrides the pod's user: %+v", sc)
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].HostPath == nil || pod.Volumes[0].HostPath.Path != "/sys/fs/cgroup" {
		t.Fatalf("volumes %+v, want the node's /sys/fs/cgroup alone", pod.Volumes)
	}
	wantMount := []corev1.VolumeMount{{Name: pod.Volumes[0].Name, MountPath: "/sys/fs/cgroup"}}
	if diff := cmp.Diff(wantMount, c.VolumeMounts); diff != "" {
		t.Errorf("The agent's mounts (-want +got), want the cgroups read-write where --cgroup-root points:\n%s", diff)
	}
	wantEnv := []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
	if diff := cmp.Diff(wantEnv, c.Env); diff != "" {
		t.Errorf("The agent's env (-want +got):\n%s", diff)
	}
	mc := manager.Spec.Template.Spec.Containers[0]
	if c.Image != mc.Image || c.ImagePullPolicy != mc.ImagePullPolicy || !slices.Equal(c.Command, mc.Command) {
		t.Errorf("The agent runs %s %q (%s), want the manager's image %s %q (%s)", c.Image, c.Command, c.ImagePullPolicy, mc.Image, mc.Command, mc.ImagePullPolicy)
	}

	if len(c.Args) == 0 || c.Args[0] != "node-agent" {
		t.Fatalf("args %q, want node-agent first", c.Args)
	}
	// Only flags the agent has, each of its type, each once.
	agentFlags := nodeagent.NewCommand().Flags()
	if err := agentFlags.Parse(c.Args[1:]); err != nil {
		t.Fatalf("backfill node-agent %s: %v", strings.Join(c.Args[1:], " "), err)
	}
	flags := map[string]string{}
	for _, arg := range c.Args[1:] {
		name, value, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if _, dup := flags[name]; dup {
			t.Errorf("--%s is passed twice", name)
		}
		flags[name] = value
	}
	for _, name := range nodeAgentFlagsSet {
		if !agentFlags.Changed(name) {
			t.Errorf("--%s is not passed to the agent", name)
		}
	}
	if flags["node-name"] != "$(NODE_NAME)" || flags["cgroup-root"] != "/sys/fs/cgroup" || flags["proc-root"] != "/proc" {
		t.Errorf("--node-name=%s --cgroup-root=%s --proc-root=%s, want $(NODE_NAME), the mount and the node's /proc", flags["node-name"], flags["cgroup-root"], flags["proc-root"])
	}
	for _, arg := range mc.Args {
		if v, ok := strings.CutPrefix(arg, "--offline-priority-class="); ok && flags["offline-priority-class"] != v {
			t.Errorf("The agent takes pods of class %q for offline, the manager %q", flags["offline-priority-class"], v)
		}
	}

	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if diff := cmp.Diff(map[string]int32{"metrics": 8080, "health": 8081}, ports); diff != "" {
		t.Errorf("The agent's ports (-want +got):\n%s", diff)
	}
	if flags["metrics-bind-address"] != ":8080" || flags["health-probe-bind-address"] != ":8081" {
		t.Errorf("The agent listens on %s and %s, not its ports", flags["metrics-bind-address"], flags["health-probe-bind-address"])
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		want  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.want || p.probe.HTTPGet.Port.String() != "health" {
			t.Errorf("The %s probe is %+v, want GET %s on the health port", p.name, p.probe, p.want)
		}
	}
}

// checkNodeAgentIdentity checks that the DaemonSet's ServiceAccount is in
// its namespace and bound to exactly the agent's rules.
func checkNodeAgentIdentity(t *testing.T, objs []*unstructured.Unstructured, ds *appsv1.DaemonSet) {
	t.Helper()
	sa := ds.Spec.Template.Spec.ServiceAccountName
	keys := byKey(t, objs)
	if _, ok := keys["ServiceAccount "+ds.Namespace+"/"+sa]; !ok {
		t.Errorf("No ServiceAccount %s/%s rendered", ds.Namespace, sa)
	}
	var bound []string
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		b := &rbacv1.ClusterRoleBinding{}
		convert(t, o, b)
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == ds.Namespace && s.Name == sa {
				bound = append(bound, o.GetKind()+" "+b.Name+" -> "+b.RoleRef.Kind+" "+b.RoleRef.Name)
			}
		}
	}
	if want := []string{"ClusterRoleBinding " + sa + " -> ClusterRole " + sa}; !slices.Equal(bound, want) {
		t.Errorf("The agent's ServiceAccount is bound by %q, want %q", bound, want)
	}
	// Its admission policy names the same user.
	user := fmt.Sprintf("request.userInfo.username == 'system:serviceaccount:%s:%s'", ds.Namespace, sa)
	if vap, ok := keys["ValidatingAdmissionPolicy "+sa+"-pods"]; !ok {
		t.Errorf("No ValidatingAdmissionPolicy %s-pods rendered", sa)
	} else if conds, _, _ := unstructured.NestedSlice(vap.Object, "spec", "matchConditions"); len(conds) != 1 || conds[0].(map[string]any)["expression"] != user {
		t.Errorf("The agent's admission policy matches %v, want %s", conds, user)
	}
	role, ok := keys["ClusterRole "+sa]
	if !ok {
		t.Fatalf("No ClusterRole %s rendered", sa)
	}
	cr := &rbacv1.ClusterRole{}
	convert(t, role, cr)
	if diff := cmp.Diff(nodeAgentRules, cr.Rules); diff != "" {
		t.Errorf("The agent's rules (-want +got):\n%s", diff)
	}
}

// nodeAgent.enabled=false renders no object of the agent, whichever
// monitor is on, and helm lint passes. admissionPolicy.enabled=false
// leaves out the agent's policy too.
func TestNodeAgentOff(t *testing.T) {
	for _, o := range decode(t, helmTemplate(t, valueSets["default"], "--set", "admissionPolicy.enabled=false")) {
		if strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
			t.Errorf("admissionPolicy.enabled=false rendered %s", objectKey(o))
		}
	}
	for _, set := range [][]string{
		{"nodeAgent.enabled=false"},
		{"nodeAgent.enabled=false", "monitoring.serviceMonitor.enabled=true"},
		{"nodeAgent.enabled=false", "monitoring.podMonitor.enabled=true"},
	} {
		t.Run(strings.Join(set, ","), func(t *testing.T) {
			var args []string
			for _, s := range set {
				args = append(args, "--set", s)
			}
			for _, o := range decode(t, helmTemplate(t, valueSets["default"], args...)) {
				if o.GetLabels()["app.kubernetes.io/component"] == "node-agent" || o.GetKind() == "DaemonSet" || o.GetKind() == "Namespace" {
					t.Errorf("%s rendered %s, labels %v", strings.Join(set, " "), objectKey(o), o.GetLabels())
				}
			}
			lint := append([]string{"lint", "--strict", chartDir(), "--namespace", namespace}, args...)
			if out, err := framework.Helm(lint...); err != nil {
				t.Errorf("helm %s: %v\n%s", strings.Join(lint, " "), err, out)
			}
		})
	}
}

// The agent's NetworkPolicy, in the chart and config/default, selects the
// agent's pods (not the manager's, whose policy does not select the
// agent's) and lets every client reach its metrics port, and nothing
// else; the kubelet's probes come from the node, which policies let in.
// networkPolicy.enabled=false renders neither policy.
func TestNodeAgentNetworkPolicy(t *testing.T) {
	renderings := map[string]func(t *testing.T) []byte{
		"chart default": func(t *testing.T) []byte { return helmTemplate(t, valueSets["default"]) },
		"kustomize config/default": func(t *testing.T) []byte {
			return kustomize(t, filepath.Join(framework.RepoRoot(), "config", "default"))
		},
	}
	for name, render := range renderings {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t))
			np := &networkingv1.NetworkPolicy{}
			oneOf(t, ofComponent(objs, "node-agent"), "NetworkPolicy", np)
			ds := daemonSetOf(t, objs)
			pod := ds.Spec.Template.Labels
			if np.Namespace != ds.Namespace || !selects(t, np, pod) {
				t.Fatalf("NetworkPolicy %s/%s does not select the agent's pods (%s, labels %v)", np.Namespace, np.Name, ds.Namespace, pod)
			}
			if selects(t, np, deploymentOf(t, objs).Spec.Template.Labels) || selects(t, networkPolicyOf(t, objs), pod) {
				t.Error("A policy selects the other component's pods")
			}
			if !hasPolicyType(np, networkingv1.PolicyTypeIngress) || hasPolicyType(np, networkingv1.PolicyTypeEgress) {
				t.Errorf("policyTypes %v, want Ingress only: the agent reaches the apiserver", np.Spec.PolicyTypes)
			}
			named := map[string]int32{}
			for _, p := range ds.Spec.Template.Spec.Containers[0].Ports {
				named[p.Name] = p.ContainerPort
			}
			agentNeighbour := source{namespace: ds.Namespace, labels: map[string]string{"app": "debug"}}
			for _, port := range []int32{named["metrics"], named["health"], 9443, 22} {
				for srcName, src := range map[string]source{"a training pod": trainingPod, "a team's pod": teamPod,
					"Prometheus": prometheus, "a pod of the manager's namespace": neighbour, "a pod of the agent's namespace": agentNeighbour} {
					want := port == named["metrics"]
					if got := ingressAllows(t, np, named, port, src); got != want {
						t.Errorf("%s reaches port %d: %v, want %v", srcName, port, got, want)
					}
				}
			}
		})
	}
	for _, o := range decode(t, helmTemplate(t, valueSets["default"], "--set", "networkPolicy.enabled=false")) {
		if o.GetKind() == "NetworkPolicy" {
			t.Errorf("networkPolicy.enabled=false rendered NetworkPolicy %s/%s", o.GetNamespace(), o.GetName())
		}
	}
}

// Prometheus scrapes the agents as the manager: with the ServiceMonitor, a
// second one beside the manager's that finds the agents' headless Service
// in their namespace, whose port is the agent's metrics port; with the
// PodMonitor, a second one that finds the agents' pods. Both keep the
// agent's own labels and name each target's node.
func TestNodeAgentMonitors(t *testing.T) {
	t.Run("ServiceMonitor", func(t *testing.T) {
		objs := decode(t, helmTemplate(t, valueSets["monitoring"]))
		ds := daemonSetOf(t, objs)
		sm := oneMonitor(t, objs, "ServiceMonitor")
		svc := &corev1.Service{}
		oneOf(t, ofComponent(objs, "node-agent"), "Service", svc)
		if svc.Namespace != ds.Namespace || svc.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Errorf("Service %s/%s with clusterIP %q, want a headless one in the agent's namespace", svc.Namespace, svc.Name, svc.Spec.ClusterIP)
		}
		if !selectorMatches(t, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, ds.Spec.Template.Labels) {
			t.Errorf("The Service's selector %v does not select the agent's pods", svc.Spec.Selector)
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
			t.Errorf("The Service's ports %+v, want metrics to the agent's metrics port", svc.Spec.Ports)
		}
		checkMonitor(t, sm, ds.Namespace, svc.Labels, "endpoints")
	})
	t.Run("PodMonitor", func(t *testing.T) {
		objs := decode(t, helmTemplate(t, valueSets["podmonitor"]))
		ds := daemonSetOf(t, objs)
		checkMonitor(t, oneMonitor(t, objs, "PodMonitor"), ds.Namespace, ds.Spec.Template.Labels, "podMetricsEndpoints")
	})
}

// oneMonitor is the agent's monitor of kind, beside the manager's.
func oneMonitor(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	var agent []*unstructured.Unstructured
	manager := 0
	for _, o := range objs {
		if o.GetKind() != kind {
			continue
		}
		switch o.GetLabels()["app.kubernetes.io/component"] {
		case "node-agent":
			agent = append(agent, o)
		case "manager":
			manager++
		}
	}
	if len(agent) != 1 || manager != 1 {
		t.Fatalf("%d %ss of the agent and %d of the manager, want one each", len(agent), kind, manager)
	}
	if agent[0].GetNamespace() != namespace {
		t.Errorf("The agent's %s is in %s, want the release's namespace beside the manager's", kind, agent[0].GetNamespace())
	}
	return agent[0]
}

// checkMonitor checks that a monitor selects targets labelled targets in
// namespace ns and scrapes their metrics port with the agent's labels and
// its node's name.
func checkMonitor(t *testing.T, m *unstructured.Unstructured, ns string, targets map[string]string, endpointsField string) {
	t.Helper()
	names, _, _ := unstructured.NestedStringSlice(m.Object, "spec", "namespaceSelector", "matchNames")
	if !slices.Equal(names, []string{ns}) {
		t.Errorf("%s looks in namespaces %v, want [%s]", m.GetName(), names, ns)
	}
	sel, _, _ := unstructured.NestedStringMap(m.Object, "spec", "selector", "matchLabels")
	if len(sel) == 0 || !selectorMatches(t, &metav1.LabelSelector{MatchLabels: sel}, targets) {
		t.Errorf("%s selects %v, which does not match the agent's %v", m.GetName(), sel, targets)
	}
	endpoints, _, _ := unstructured.NestedSlice(m.Object, "spec", endpointsField)
	if len(endpoints) != 1 {
		t.Fatalf("%s has %d endpoints, want 1", m.GetName(), len(endpoints))
	}
	ep := endpoints[0].(map[string]any)
	if ep["port"] != "metrics" || ep["path"] != "/metrics" || ep["honorLabels"] != true {
		t.Errorf("%s scrapes %v, want port metrics, /metrics, honorLabels", m.GetName(), ep)
	}
	want := []any{map[string]any{"sourceLabels": []any{"__meta_kubernetes_pod_node_name"}, "targetLabel": "node"}}
	if diff := cmp.Diff(want, ep["relabelings"]); diff != "" {
		t.Errorf("%s relabelings (-want +got):\n%s", m.GetName(), diff)
	}
}

// The agent's ServiceAccount, with nothing but the chart's RBAC and with
// the chart's admission policies in force, does what the agent does,
// holding the token of an agent pod on node-1 as the kubelet gives it:
// lists the pods of its node, reads TFJobs, records events, writes the
// stop notice on a TFJob's replica and takes it off again, and evicts the
// replica (the policies match pods, not their eviction subresource, so it
// needs no place among the manager policy's users). Its own policy, which
// the apiserver type-checks, keeps its pod patches to the notice on pods
// of its node: no other annotation, label, owner, finalizer or image, no
// pod of another node, nothing with a token bound to no node. RBAC keeps
// it from creating or deleting pods, reading secrets and writing nodes or
// TFJobs.
func TestNodeAgentRBACOnAPIServer(t *testing.T) {
	if err := clusterReady(); err != nil {
		t.Fatal(err)
	}
	kcm, err := apiServer.StartControllerManager(t.TempDir(), "validatingadmissionpolicy-status-controller")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kcm.Stop() })
	applyAdmissionPolicy(t)
	apply(t, helmTemplate(t, valueSets["default"], "--show-only", "templates/nodeagent-serviceaccount.yaml",
		"--show-only", "templates/nodeagent-rbac.yaml", "--show-only", "templates/nodeagent-admissionpolicy.yaml"))
	eventuallyTypeChecked(t, nodeAgentPolicyName)
	const ns = "agent-team"
	if err := apiServer.CreateNamespace(ctx(t), ns); err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"node-1", "node-2"} {
		if err := apiServer.Client.Create(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	waitUntilRefused(t, podWriter(t, ns, "trainer"), newPod(ns, "probe", operatorLabel))
	agent := nodeAgentClient(t, "node-1")
	operator := tokenClient(t, namespace, "backfill-manager")

	job := distributedJob(ns, "evicted")
	if err := apiServer.Client.Create(ctx(t), job); err != nil {
		t.Fatal(err)
	}
	replica := newPod(ns, "evicted-worker-0", operatorLabel, *metav1.NewControllerRef(job, kubeflowv1.GroupVersion.WithKind(kubeflowv1.Kind)))
	replica.Spec.NodeName = "node-1"
	if err := operator.Create(ctx(t), replica); err != nil {
		t.Fatalf("The manager's ServiceAccount creating a replica: %v", err)
	}
	elsewhere := newPod(ns, "elsewhere", nil)
	elsewhere.Spec.NodeName = "node-2"
	if err := apiServer.Client.Create(ctx(t), elsewhere); err != nil {
		t.Fatal(err)
	}

	var pods corev1.PodList
	if err := agent.List(ctx(t), &pods, client.MatchingFields{"spec.nodeName": "node-1"}); err != nil || len(pods.Items) != 2 {
		t.Errorf("The agent listing its node's pods: %v, %d pods, want the replica and the agent's own", err, len(pods.Items))
	}
	if err := agent.Get(ctx(t), client.ObjectKeyFromObject(job), &kubeflowv1.TFJob{}); err != nil {
		t.Errorf("The agent reading the TFJob: %v", err)
	}
	if err := agent.List(ctx(t), &kubeflowv1.TFJobList{}, client.InNamespace(ns)); err != nil {
		t.Errorf("The agent listing TFJobs: %v", err)
	}
	event := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evicted-worker-0.agent"},
		EventTime:  metav1.NowMicro(), ReportingController: "backfill.dev/node-agent", ReportingInstance: "node-1",
		Action: "Evict", Reason: "NodeMemoryPressure", Type: corev1.EventTypeWarning,
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: replica.Name, UID: replica.UID},
	}
	if err := agent.Create(ctx(t), event); err != nil {
		t.Errorf("The agent recording an event: %v", err)
	}

	// The apiserver loads a policy a moment after it is created.
	eventually(t, "policy "+nodeAgentPolicyName+" in force", func(ctx context.Context) (bool, string, error) {
		err := agent.Patch(ctx, replica.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"app":"x"}}}`)), client.DryRunAll)
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), nodeAgentPolicyName), fmt.Sprint(err), nil
	})

	t.Run("pod patches", func(t *testing.T) {
		notice := `{"metadata":{"annotations":{"backfill.dev/stop-reason":"ReclaimedForOnline","backfill.dev/stop-at":"2030-01-01T00:00:00Z"}}}`
		if err := mergePatch(t, agent, replica, notice); err != nil {
			t.Errorf("The agent giving its node's replica the stop notice: %v, want it allowed", err)
		}
		if err := mergePatch(t, agent, replica, `{"metadata":{"annotations":{"backfill.dev/stop-reason":null,"backfill.dev/stop-at":null}}}`); err != nil {
			t.Errorf("The agent taking the notice off: %v, want it allowed", err)
		}
		const agentUser = "system:serviceaccount:" + nodeAgentNamespace + ":backfill-node-agent"
		for what, tc := range map[string]struct {
			c     client.Client
			pod   *corev1.Pod
			patch string // a strategic merge patch
			want  string
		}{
			"another annotation": {agent, replica, `{"metadata":{"annotations":{"team.example/note":"x"}}}`, "may change only the annotations backfill.dev/stop-reason and backfill.dev/stop-at"},
			"a label":            {agent, replica, `{"metadata":{"labels":{"app":"x"}}}`, "not its spec, labels, owners or finalizers"},
			"the operator label": {agent, elsewhere, `{"metadata":{"labels":{"training.kubeflow.org/operator-name":"tfjob-controller"}}}`, ""},
			"an owner":           {agent, replica, `{"metadata":{"ownerReferences":null}}`, "not its spec, labels, owners or finalizers"},
			"a finalizer":        {agent, replica, `{"metadata":{"finalizers":["example.com/keep"]}}`, "not its spec, labels, owners or finalizers"},
			"an image":           {agent, replica, `{"spec":{"containers":[{"name":"tensorflow","image":"example.com/miner"}]}}`, "not its spec, labels, owners or finalizers"},
			"another node's pod": {agent, elsewhere, notice, agentUser + " may change only pods of its own node (node-1), and pod elsewhere is on node node-2"},
			"with no node":       {tokenClient(t, nodeAgentNamespace, "backfill-node-agent"), replica, notice, "its token names no node"},
		} {
			err := tc.c.Patch(ctx(t), tc.pod.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, []byte(tc.patch)))
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("The agent patching %s: %v, want Forbidden saying %q", what, err, tc.want)
			}
		}
	})

	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: replica.Name}}
	if err := agent.SubResource("eviction").Create(ctx(t), replica, eviction); err != nil {
		t.Fatalf("The agent evicting a TFJob's replica under the admission policies: %v", err)
	}
	eventually(t, "the replica evicted", func(ctx context.Context) (bool, string, error) {
		pod := &corev1.Pod{}
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(replica), pod)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return pod.DeletionTimestamp != nil, fmt.Sprintf("%v, deletion %v", err, pod.DeletionTimestamp), client.IgnoreNotFound(err)
	})

	forbidden := map[string]error{
		"create a pod":  agent.Create(ctx(t), newPod(ns, "agent-made", nil), client.DryRunAll),
		"delete a pod":  agent.Delete(ctx(t), elsewhere, client.DryRunAll),
		"list secrets":  agent.List(ctx(t), &corev1.SecretList{}, client.InNamespace(ns)),
		"patch a node":  mergePatch(t, agent, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, `{"metadata":{"labels":{"a":"b"}}}`),
		"patch a TFJob": mergePatch(t, agent, job, `{"metadata":{"labels":{"a":"b"}}}`),
	}
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("The agent may %s: %v, want Forbidden", what, err)
		}
	}
}

// nodeAgentPolicyName is the node agent's admission policy of release
// backfill.
const nodeAgentPolicyName = "backfill-node-agent-pods"

// nodeAgentClient is a client with the token the kubelet would give an
// agent pod on node: bound to such a pod, which names the node.
func nodeAgentClient(t *testing.T, node string) client.Client {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: nodeAgentNamespace, Name: "backfill-node-agent-" + node},
		Spec: corev1.PodSpec{ServiceAccountName: "backfill-node-agent", NodeName: node,
			Containers: []corev1.Container{{Name: "node-agent", Image: "backfill:0.1.0"}}},
	}
	if err := apiServer.Client.Create(ctx(t), pod); err != nil {
		t.Fatalf("Creating an agent pod on %s: %v", node, err)
	}
	clientset, err := kubernetes.NewForConfig(apiServer.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := clientset.CoreV1().ServiceAccounts(nodeAgentNamespace).CreateToken(ctx(t), "backfill-node-agent", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("A token of the agent bound to pod %s: %v", pod.Name, err)
	}
	cfg := rest.AnonymousClientConfig(apiServer.Env.Config)
	cfg.BearerToken = tr.Status.Token
	c, err := client.New(cfg, client.Options{Scheme: framework.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mergePatch applies a JSON merge patch to obj as c.
func mergePatch(t *testing.T, c client.Client, obj client.Object, patch string) error {
	t.Helper()
	return c.Patch(ctx(t), obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, []byte(patch)))
}

// daemonSetOf is the one DaemonSet of a rendering.
func daemonSetOf(t *testing.T, objs []*unstructured.Unstructured) *appsv1.DaemonSet {
	t.Helper()
	ds := &appsv1.DaemonSet{}
	oneOf(t, objs, "DaemonSet", ds)
	return ds
}

// convert converts an object into a typed one.
func convert(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatalf("Converting %s: %v", objectKey(o), err)
	}
}

// agentDefaults are the agent's protection settings at their defaults, as
// flags.
func agentDefaults() []string {
	flags := nodeagent.NewCommand().Flags()
	var args []string
	for _, name := range []string{"interval", "cpu-threshold", "cpu-activation", "cpu-activation-band", "cpu-release-ticks", "cpu-floor", "cpu-growth", "cpu-idle", "memory-threshold"} {
		args = append(args, "--"+name+"="+flags.Lookup(name).DefValue)
	}
	return args
}
