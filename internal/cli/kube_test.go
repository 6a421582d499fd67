package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
)

const twoContexts = `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: a
  cluster: {server: "https://127.0.0.1:6443"}
- name: b
  cluster: {server: "https://127.0.0.1:7443"}
users:
- name: u
  user: {token: from-file}
contexts:
- name: a
  context: {cluster: a, user: u, namespace: ml}
- name: b
  context: {cluster: b, user: u}
`

// The connection flags resolve as kubectl's do: the kubeconfig's current
// context and namespace unless --context, -n, -s or --token say otherwise.
func TestKubeFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                    string
		args                    []string
		wantHost, wantNS, token string
	}{
		{"the current context", nil, "https://127.0.0.1:6443", "ml", "from-file"},
		{"--context", []string{"--context=b"}, "https://127.0.0.1:7443", "default", "from-file"},
		{"-n", []string{"-n", "team"}, "https://127.0.0.1:6443", "team", "from-file"},
		{"-s and --token", []string{"-s", "https://127.0.0.1:8443", "--token=flag"}, "https://127.0.0.1:8443", "ml", "flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := &cobra.Command{Use: "x"}
			flags := addKubeFlags(cmd)
			if err := cmd.ParseFlags(append([]string{"--kubeconfig", path}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			k, err := flags.connect()
			if err != nil {
				t.Fatal(err)
			}
			if k.config.Host != tc.wantHost || k.namespace != tc.wantNS || k.config.BearerToken != tc.token {
				t.Errorf("host %q, namespace %q, token %q; want %q, %q, %q", k.config.Host, k.namespace, k.config.BearerToken, tc.wantHost, tc.wantNS, tc.token)
			}
		})
	}
}
