//go:build integration

package install

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/internal/observability/rules"
)

// The PrometheusRule holds the alerts of alerting.profile, group by group
// as the generated rule file of that profile, and says which profile.
func TestAlertProfiles(t *testing.T) {
	for profile, want := range map[rules.Profile]int{rules.ProfileEssential: 7, rules.ProfileFull: 16} {
		t.Run(string(profile), func(t *testing.T) {
			groups := rules.InProfile(rules.Groups(), profile)
			if got := len(rules.AlertNames(groups)); got != want {
				t.Fatalf("The %s profile defines %d alerts, docs/alerting.md says %d", profile, got, want)
			}
			objs := byKey(t, decode(t, helmTemplate(t, valueSets["default"],
				"--set", "monitoring.prometheusRule.enabled=true", "--set", "alerting.profile="+string(profile))))
			rule, ok := objs["PrometheusRule "+namespace+"/backfill"]
			if !ok {
				t.Fatalf("No PrometheusRule backfill among %v", keysOf(objs))
			}
			if got := rule.GetAnnotations()["backfill.dev/alert-profile"]; got != string(profile) {
				t.Errorf("Annotation backfill.dev/alert-profile = %q, want %s", got, profile)
			}
			rendered, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
			var count int
			for _, g := range rendered {
				alerts, _ := g.(map[string]any)["rules"].([]any)
				count += len(alerts)
			}
			if count != want {
				t.Errorf("The PrometheusRule holds %d alerts, want %d", count, want)
			}
			file, err := rules.RuleFile(groups)
			if err != nil {
				t.Fatal(err)
			}
			var generated map[string]any
			if err := yaml.Unmarshal(file, &generated); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(generated["groups"], any(rendered)); diff != "" {
				t.Errorf("The PrometheusRule's groups differ from the %s profile's (-generated +rendered):\n%s", profile, diff)
			}
		})
	}
}

// everyReceiver turns on every receiver, and the relay with its DingTalk
// robot only: the WeCom robot, with no Secret, gets no webhook.
const everyReceiver = `
alerting:
  alertmanagerConfig:
    enabled: true
    matcherStrategy: None
    labels: {release: kube-prometheus-stack}
    groupWait: 1m
    receivers:
      wechat:
        enabled: true
        corpID: ww0123
        agentID: "1000002"
        toParty: "2"
        apiSecret: {name: wecom-app, key: secret}
      email:
        enabled: true
        to: oncall@example.com
        from: backfill@example.com
        smarthost: smtp.example.com:587
        authUsername: backfill@example.com
        authPassword: {name: smtp, key: password}
      webhooks:
        - url: https://pager.example.com/hook
        - urlSecret: {name: chat-hook, key: url}
          severities: [warning]
  relay:
    enabled: true
    dingtalk:
      urlSecret: {name: dingtalk-robot, key: url}
`

// alertmanagerConfigOf renders the default value set with more values
// and returns its one AlertmanagerConfig, and the whole rendering.
func alertmanagerConfigOf(t *testing.T, values string) (*unstructured.Unstructured, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "alerting.yaml")
	if err := os.WriteFile(path, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := helmTemplate(t, valueSets["default"], "--values", path)
	objs := byKey(t, decode(t, manifest))
	amc, ok := objs["AlertmanagerConfig "+namespace+"/backfill"]
	if !ok {
		t.Fatalf("No AlertmanagerConfig backfill among %v", keysOf(objs))
	}
	return amc, manifest
}

// With every receiver on, critical alerts reach the paging receivers and
// warnings the chat ones, each receiver's secret by reference; the route
// takes only backfill's alerts, grouped per TFJob and per node; a node's
// alerts hold back its per-job ones; and the apiserver accepts it.
func TestAlertmanagerConfigEveryReceiver(t *testing.T) {
	amc, manifest := alertmanagerConfigOf(t, everyReceiver)
	if got := amc.GetLabels()["release"]; got != "kube-prometheus-stack" {
		t.Errorf("Label release = %q, want the alertmanagerConfigSelector's kube-prometheus-stack", got)
	}
	spec := amc.Object["spec"].(map[string]any)
	wechat := map[string]any{"corpID": "ww0123", "agentID": "1000002", "toParty": "2", "sendResolved": true,
		"apiSecret": map[string]any{"name": "wecom-app", "key": "secret"}}
	relay := map[string]any{"url": "http://backfill-alert-relay." + namespace + ".svc:8080/dingtalk", "sendResolved": true}
	wantReceivers := []any{
		map[string]any{
			"name":          "critical",
			"wechatConfigs": []any{wechat},
			"emailConfigs": []any{map[string]any{"to": "oncall@example.com", "from": "backfill@example.com",
				"smarthost": "smtp.example.com:587", "authUsername": "backfill@example.com", "requireTLS": true, "sendResolved": true,
				"authPassword": map[string]any{"name": "smtp", "key": "password"}}},
			"webhookConfigs": []any{map[string]any{"url": "https://pager.example.com/hook", "sendResolved": true}, relay},
		},
		map[string]any{
			"name":          "warning",
			"wechatConfigs": []any{wechat},
			"webhookConfigs": []any{
				map[string]any{"urlSecret": map[string]any{"name": "chat-hook", "key": "url"}, "sendResolved": true}, relay,
			},
		},
	}
	if diff := cmp.Diff(wantReceivers, spec["receivers"]); diff != "" {
		t.Errorf("receivers (-want +got):\n%s", diff)
	}

	matcher := func(name, op, value string) map[string]any {
		return map[string]any{"name": name, "matchType": op, "value": value}
	}
	byJob := map[string]any{"matchers": []any{matcher("tfjob", "=~", ".+")}, "groupBy": []any{"namespace", "tfjob"}}
	byNode := map[string]any{"matchers": []any{matcher("node", "=~", ".+")}, "groupBy": []any{"node"}}
	byPool := map[string]any{"matchers": []any{matcher("pool", "=~", ".+")}, "groupBy": []any{"pool"}}
	wantRoute := map[string]any{
		"receiver": "warning",
		"matchers": []any{matcher("alertname", "=~", "Backfill.+")},
		"groupBy":  []any{"alertname"}, "groupWait": "1m", "groupInterval": "5m", "repeatInterval": "4h",
		"routes": []any{
			map[string]any{"receiver": "critical", "matchers": []any{matcher("severity", "=", "critical")}, "routes": []any{byJob, byNode, byPool}},
			byJob, byNode, byPool,
		},
	}
	if diff := cmp.Diff(wantRoute, spec["route"]); diff != "" {
		t.Errorf("route (-want +got):\n%s", diff)
	}

	wantInhibit := []any{map[string]any{
		"sourceMatch": []any{matcher("alertname", "=~", "BackfillNodeAgentMissing|BackfillReclaimUsageStale"), matcher("node", "=~", ".+")},
		"targetMatch": []any{matcher("alertname", "=~", "BackfillTFJob.+"), matcher("node", "=~", ".+")},
		"equal":       []any{"node"},
	}}
	if diff := cmp.Diff(wantInhibit, spec["inhibitRules"]); diff != "" {
		t.Errorf("inhibitRules (-want +got):\n%s", diff)
	}
	checkMatchersNameAlerts(t, spec)

	if warnings := dryRun(t, manifest); strings.Contains(warnings, "Warning") {
		t.Errorf("The dry-run of the chart with an AlertmanagerConfig warned:\n%s", warnings)
	}
}

// checkMatchersNameAlerts checks the matchers against the alerts they are
// about: the route's takes every alert, the inhibition's sources and
// targets are alerts that carry the label node, which equal compares.
func checkMatchersNameAlerts(t *testing.T, spec map[string]any) {
	t.Helper()
	defined := map[string]bool{}
	for _, g := range rules.Groups() {
		for _, a := range g.Alerts {
			if !strings.HasPrefix(a.Name, "Backfill") {
				t.Errorf("%s: the route's matcher alertname=~Backfill.+ does not take it", a.Name)
			}
			defined[a.Name] = true
		}
	}
	for _, name := range []string{"BackfillNodeAgentMissing", "BackfillReclaimUsageStale", "BackfillTFJobGPUIdle", "BackfillTFJobGPUMemoryNearFull"} {
		if !defined[name] {
			t.Errorf("The inhibition is about %s, which rules.Groups() does not define", name)
		}
	}
}

// With only warning receivers, critical alerts go to them rather than
// nowhere.
func TestAlertmanagerConfigCriticalFallsBackToWarning(t *testing.T) {
	amc, _ := alertmanagerConfigOf(t, `
alerting:
  alertmanagerConfig:
    enabled: true
    matcherStrategy: None
    receivers:
      webhooks:
        - url: https://chat.example.com/hook
          severities: [warning]
`)
	routes, _, _ := unstructured.NestedSlice(amc.Object, "spec", "route", "routes")
	if got := routes[0].(map[string]any)["receiver"]; got != "warning" {
		t.Errorf("The critical route's receiver = %v, want warning: no receiver takes critical", got)
	}
	receivers, _, _ := unstructured.NestedSlice(amc.Object, "spec", "receivers")
	want := []any{
		map[string]any{"name": "critical"},
		map[string]any{"name": "warning", "webhookConfigs": []any{map[string]any{"url": "https://chat.example.com/hook", "sendResolved": true}}},
	}
	if diff := cmp.Diff(want, receivers); diff != "" {
		t.Errorf("receivers (-want +got):\n%s", diff)
	}
}

// Values that would send nothing, or drop alerts silently, are refused
// with what to fix.
func TestAlertmanagerConfigRefusals(t *testing.T) {
	on := []string{"alerting.alertmanagerConfig.enabled=true", "alerting.alertmanagerConfig.matcherStrategy=None"}
	wechat := slices.Concat(on, []string{"alerting.alertmanagerConfig.receivers.wechat.enabled=true",
		"alerting.alertmanagerConfig.receivers.wechat.corpID=ww0123", "alerting.alertmanagerConfig.receivers.wechat.agentID=1000002"})
	email := slices.Concat(on, []string{"alerting.alertmanagerConfig.receivers.email.enabled=true"})
	tests := map[string]struct {
		set  []string
		want string
	}{
		"the operator's default matcher strategy": {
			set:  []string{"alerting.alertmanagerConfig.enabled=true", "alerting.alertmanagerConfig.receivers.webhooks[0].url=https://x.example.com"},
			want: "alertmanagerConfigMatcherStrategy.type=None",
		},
		"except the Alertmanager's namespace, with no namespace": {
			set: []string{"alerting.alertmanagerConfig.enabled=true", "alerting.alertmanagerConfig.matcherStrategy=OnNamespaceExceptForAlertmanagerNamespace",
				"alerting.alertmanagerConfig.receivers.webhooks[0].url=https://x.example.com"},
			want: "set alerting.alertmanagerConfig.namespace to it",
		},
		"no receiver":            {set: on, want: "alerting.alertmanagerConfig.enabled=true with no receiver"},
		"wechat without corpID":  {set: append(on, "alerting.alertmanagerConfig.receivers.wechat.enabled=true"), want: "corpID and agentID are required"},
		"wechat without whom":    {set: wechat, want: "give toUser, toParty or toTag"},
		"wechat without secret":  {set: append(wechat, "alerting.alertmanagerConfig.receivers.wechat.toUser=@all"), want: "wechat.apiSecret: name and key"},
		"email without to":       {set: email, want: "to, from and smarthost"},
		"email user, no secret":  {set: append(email, "alerting.alertmanagerConfig.receivers.email.to=a@example.com", "alerting.alertmanagerConfig.receivers.email.from=b@example.com", "alerting.alertmanagerConfig.receivers.email.smarthost=smtp.example.com:587", "alerting.alertmanagerConfig.receivers.email.authUsername=b"), want: "authUsername b without authPassword"},
		"webhook with neither":   {set: append(on, "alerting.alertmanagerConfig.receivers.webhooks[0].severities[0]=critical"), want: "webhooks[0]: give url or urlSecret"},
		"webhook secret, no key": {set: append(on, "alerting.alertmanagerConfig.receivers.webhooks[0].urlSecret.name=hook"), want: "urlSecret: name hook without key"},
		"unknown profile":        {set: []string{"alerting.profile=all"}, want: "value must be one of 'essential', 'full'"},
		"unknown severity":       {set: []string{"alerting.alertmanagerConfig.receivers.email.severities[0]=page"}, want: "severities/0"},
		"zero group interval":    {set: []string{"alerting.alertmanagerConfig.groupInterval=0s"}, want: "groupInterval"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { checkRefused(t, tc.set, tc.want) })
	}
}
