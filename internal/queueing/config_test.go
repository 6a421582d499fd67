package queueing

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFrameworks(t *testing.T) {
	cases := map[string]struct {
		config  string
		want    []string
		wantErr string
	}{
		"the TFJob integration on": {
			config: "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nintegrations:\n  frameworks:\n  - \"batch/job\"\n  - \"kubeflow.org/tfjob\"\n",
			want:   []string{"batch/job", TFJobFramework},
		},
		"Kueue's shipped list, TFJob commented out": {
			config: "integrations:\n  frameworks:\n  - \"batch/job\"\n  - \"jobset.x-k8s.io/jobset\"\n  # - \"kubeflow.org/tfjob\"\n  - \"pod\"\n",
			want:   []string{"batch/job", "jobset.x-k8s.io/jobset", "pod"},
		},
		"no integrations: Kueue's default": {
			config: "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n",
			want:   []string{"batch/job"},
		},
		"not YAML": {config: "integrations: [", wantErr: "reading Kueue's configuration"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Frameworks(tc.config)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("frameworks (-want +got):\n%s", diff)
			}
		})
	}
}
