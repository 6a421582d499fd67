//go:build integration

package install

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/backfill-dev/backfill/internal/cli"
)

// relayValues turn the relay on with a signed DingTalk robot, whose URL
// and secret are keys of one Secret, and a WeCom robot.
const relayValues = `
alerting:
  relay:
    enabled: true
    dingtalk:
      urlSecret: {name: dingtalk-robot}
      signSecret: {name: dingtalk-robot, key: sign}
    wecom:
      urlSecret: {name: wecom-robot, key: webhook}
`

func renderRelay(t *testing.T, values string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "relay.yaml")
	if err := os.WriteFile(path, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return helmTemplate(t, valueSets["default"], "--values", path)
}

// The relay runs the manager's image as `backfill alert-relay` with flags
// the command has, reads each robot's file from its Secret's volume, and
// is reached at <fullname>-alert-relay:8080, which selects its pods and
// not the manager's.
func TestAlertRelayRendering(t *testing.T) {
	manifest := renderRelay(t, relayValues)
	objs := decode(t, manifest)
	relayObjs := ofComponent(objs, "alert-relay")
	var deploy appsv1.Deployment
	var svc corev1.Service
	oneOf(t, relayObjs, "Deployment", &deploy)
	oneOf(t, relayObjs, "Service", &svc)
	manager := deploymentOf(t, ofComponent(objs, "manager"))

	if svc.Name != "backfill-alert-relay" || svc.Namespace != namespace {
		t.Errorf("Service %s/%s, want %s/backfill-alert-relay", svc.Namespace, svc.Name, namespace)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "http" || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[0].TargetPort.StrVal != "http" {
		t.Errorf("Service ports %+v, want one, http 8080 to the container's http", svc.Spec.Ports)
	}
	pod := deploy.Spec.Template
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("The Service's selector %v does not select the relay's pods %v", svc.Spec.Selector, pod.Labels)
	}
	if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(manager.Spec.Template.Labels)) ||
		labels.SelectorFromSet(manager.Spec.Selector.MatchLabels).Matches(labels.Set(pod.Labels)) {
		t.Error("The relay's and the manager's selectors overlap")
	}

	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if c.Image != manager.Spec.Template.Spec.Containers[0].Image {
		t.Errorf("Image %s, want the manager's %s", c.Image, manager.Spec.Template.Spec.Containers[0].Image)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 || !slices.Contains(c.Args, "--listen=:8080") {
		t.Errorf("Container ports %+v and args %v, want http on 8080", c.Ports, c.Args)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot {
		t.Error("The relay must run as non-root with a read-only root filesystem")
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Error("The relay needs no API access, yet mounts a ServiceAccount token")
	}

	checkRelayArgs(t, c.Command, c.Args)
	// Each file flag names a file a Secret volume provides.
	files := map[string]string{}
	for _, arg := range c.Args {
		if flag, path, ok := strings.Cut(arg, "="); ok && strings.HasSuffix(flag, "-file") {
			files[flag] = path
		}
	}
	want := map[string][2]string{
		"--dingtalk-url-file":    {"dingtalk-robot", "url"},
		"--dingtalk-secret-file": {"dingtalk-robot", "sign"},
		"--wecom-url-file":       {"wecom-robot", "webhook"},
	}
	if len(files) != len(want) {
		t.Errorf("File flags %v, want %d of them", files, len(want))
	}
	for flag, secret := range want {
		path, ok := files[flag]
		if !ok {
			t.Errorf("No %s", flag)
			continue
		}
		if got := secretKeyAt(t, pod.Spec, c, path); got != secret {
			t.Errorf("%s=%s is Secret key %v, want %v", flag, path, got, secret)
		}
	}
}

// checkRelayArgs parses the container's arguments with the command line
// of the binary, so that a flag the command lacks fails here.
func checkRelayArgs(t *testing.T, command, args []string) {
	t.Helper()
	if !slices.Equal(command, []string{"backfill"}) || len(args) == 0 || args[0] != "alert-relay" {
		t.Fatalf("Command %v %v, want backfill alert-relay", command, args)
	}
	relay, _, err := cli.NewRootCommand().Find([]string{"alert-relay"})
	if err != nil || relay.Name() != "alert-relay" {
		t.Fatalf("backfill has no alert-relay command: %v", err)
	}
	if err := relay.ParseFlags(args[1:]); err != nil {
		t.Errorf("backfill alert-relay refuses the chart's args %v: %v", args[1:], err)
	}
}

// secretKeyAt is the Secret name and key whose file the container sees at
// path, through a volume mount of a Secret volume with items.
func secretKeyAt(t *testing.T, pod corev1.PodSpec, c corev1.Container, path string) [2]string {
	t.Helper()
	for _, m := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(path, m.MountPath+"/")
		if !ok || m.SubPath != "" {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			for _, item := range v.Secret.Items {
				if item.Path == rel {
					return [2]string{v.Secret.SecretName, item.Key}
				}
			}
		}
	}
	return [2]string{}
}

// The apiserver accepts the relay's objects, and its pod passes the
// restricted Pod Security level.
func TestAlertRelayDryRun(t *testing.T) {
	manifest := renderRelay(t, relayValues)
	if warnings := dryRun(t, manifest); strings.Contains(warnings, "Warning") {
		t.Errorf("The dry-run warned:\n%s", warnings)
	}
}

// Off by default: the chart renders no relay object, and only the robots
// named get a flag and a volume.
func TestAlertRelayOffAndOneRobot(t *testing.T) {
	if got := ofComponent(decode(t, helmTemplate(t, valueSets["default"])), "alert-relay"); len(got) != 0 {
		t.Errorf("The default rendering has relay objects: %v", keysOfObjects(got))
	}
	var deploy appsv1.Deployment
	oneOf(t, ofComponent(decode(t, renderRelay(t, `
alerting:
  relay:
    enabled: true
    wecom:
      urlSecret: {name: wecom-robot}
`)), "alert-relay"), "Deployment", &deploy)
	args := deploy.Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--wecom-url-file=/etc/backfill/alert-relay/wecom-url/url") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--dingtalk") }) {
		t.Errorf("Args %v, want the WeCom robot's file only", args)
	}
	if n := len(deploy.Spec.Template.Spec.Volumes); n != 1 {
		t.Errorf("%d volumes, want the WeCom robot's only", n)
	}
}

func keysOfObjects(objs []*unstructured.Unstructured) []string {
	var keys []string
	for _, o := range objs {
		keys = append(keys, objectKey(o))
	}
	return keys
}

func TestChartRefusesBadRelayValues(t *testing.T) {
	tests := map[string]struct {
		set  []string
		want string
	}{
		"enabled without a robot": {
			set:  []string{"alerting.relay.enabled=true"},
			want: "alerting.relay.enabled=true with no robot: set alerting.relay.dingtalk.urlSecret.name or alerting.relay.wecom.urlSecret.name",
		},
		"signing secret without URL": {
			set:  []string{"alerting.relay.enabled=true", "alerting.relay.wecom.urlSecret.name=wecom", "alerting.relay.dingtalk.signSecret.name=sign"},
			want: "alerting.relay.dingtalk.signSecret.name=sign without dingtalk.urlSecret.name",
		},
		"robot with the relay off": {
			set:  []string{"alerting.relay.dingtalk.urlSecret.name=dingtalk"},
			want: "alerting.relay names a robot's Secret but alerting.relay.enabled=false",
		},
		"empty key": {
			set:  []string{"alerting.relay.enabled=true", "alerting.relay.wecom.urlSecret.name=wecom", "alerting.relay.wecom.urlSecret.key="},
			want: "/alerting/relay/wecom/urlSecret/key': minLength",
		},
		"unknown robot": {
			set:  []string{"alerting.relay.enabled=true", "alerting.relay.slack.urlSecret.name=x"},
			want: "slack",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { checkRefused(t, tc.set, tc.want) })
	}
}
