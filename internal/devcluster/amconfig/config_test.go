package amconfig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestConfig(t *testing.T) {
	got, err := Config("http://127.0.0.1:9999/alerts")
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	// Both sides are decoded, so the comparison ignores layout.
	const want = `
route:
  receiver: backfill-dev-sink
  group_by: [alertname, namespace, tfjob, node, pool]
  group_wait: 5s
  group_interval: 10s
  repeat_interval: 1h
receivers:
- name: backfill-dev-sink
  webhook_configs:
  - url: http://127.0.0.1:9999/alerts
    send_resolved: true
`
	if diff := cmp.Diff(decode(t, []byte(want)), decode(t, got)); diff != "" {
		t.Errorf("alertmanager.yml (-want +got):\n%s\ngot:\n%s", diff, got)
	}
}

func TestConfigRejectsBadURLs(t *testing.T) {
	for name, u := range map[string]string{
		"host:port without a scheme": "127.0.0.1:9999",
		"no host":                    "http:///alerts",
		"another scheme":             "ftp://127.0.0.1/alerts",
		"empty":                      "",
	} {
		t.Run(name, func(t *testing.T) {
			out, err := Config(u)
			if err == nil {
				t.Fatalf("Config(%q) succeeded, want an error; got:\n%s", u, out)
			}
			if !strings.Contains(err.Error(), "webhook URL") {
				t.Errorf("error %q, want it to name the webhook URL", err)
			}
		})
	}
}

func decode(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("decoding YAML: %v\n%s", err, data)
	}
	return v
}
