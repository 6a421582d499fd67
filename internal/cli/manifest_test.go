package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const validJob = `apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: %s
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            image: tensorflow/tensorflow:2.15.0
`

func jobYAML(name string) string { return strings.ReplaceAll(validJob, "%s", name) }

func TestReadManifests(t *testing.T) {
	for name, tc := range map[string]struct {
		input     string
		wantNames []string
		wantErr   string
	}{
		"one job": {input: jobYAML("a"), wantNames: []string{"/a"}},
		"several documents, comments and empty ones": {
			input:     "# jobs\n---\n" + jobYAML("a") + "---\n# nothing\n---\n" + jobYAML("b"),
			wantNames: []string{"/a", "/b"},
		},
		"json": {
			input:     `{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"j","namespace":"team"},"spec":{"tfReplicaSpecs":{}}}`,
			wantNames: []string{"team/j"},
		},
		"unknown field, with its path": {
			input:   strings.Replace(jobYAML("a"), "replicas: 2", "replica: 2", 1),
			wantErr: `FILE document 1: unknown field "spec.tfReplicaSpecs.Worker.replica" (check the spelling against ` + "`kubectl explain tfjob.spec`)",
		},
		"unknown field deep in the pod template": {
			input:   strings.Replace(jobYAML("a"), "image:", "imagee:", 1),
			wantErr: `FILE document 1: unknown field "spec.tfReplicaSpecs.Worker.template.spec.containers[0].imagee" (check the spelling against ` + "`kubectl explain tfjob.spec`)",
		},
		"duplicate key": {
			input:   strings.Replace(jobYAML("a"), "      replicas: 2\n", "      replicas: 2\n      replicas: 3\n", 1),
			wantErr: `FILE document 1: not valid YAML: yaml: unmarshal errors: line 9: key "replicas" already set in map`,
		},
		"second document is not a TFJob": {
			input:   jobYAML("a") + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
			wantErr: `FILE document 2: Deployment "apps/v1" is not a TFJob: submit takes apiVersion kubeflow.org/v1, kind TFJob (use kubectl apply for other objects)`,
		},
		"wrong type": {
			input:   strings.Replace(jobYAML("a"), "replicas: 2", "replicas: two", 1),
			wantErr: `FILE document 1: not a valid TFJob: json: cannot unmarshal string into Go struct field ReplicaSpec.spec.tfReplicaSpecs.replicas of type int32`,
		},
		"no name": {input: strings.Replace(jobYAML("a"), "  name: a\n", "  labels: {}\n", 1), wantErr: "FILE document 1: metadata.name is missing: every TFJob needs a name"},
		"empty":   {input: "# nothing here\n", wantErr: "no TFJob in FILE"},
		"an unknown capacity": {input: strings.Replace(jobYAML("a"), "  name: a\n", "  name: a\n  annotations: {backfill.dev/capacity: idle}\n", 1),
			wantErr: `FILE document 1: annotation backfill.dev/capacity="idle": must be "reclaimed"`},
		"not yaml": {input: "spec: [unclosed\n", wantErr: "FILE document 1: not valid YAML:"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.yaml")
			if err := os.WriteFile(path, []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readManifests([]string{path}, nil)
			if tc.wantErr != "" {
				if err == nil || !isUsageError(err) || !strings.HasPrefix(err.Error(), strings.ReplaceAll(tc.wantErr, "FILE", path)) {
					t.Fatalf("readManifests = %v, want a usage error starting %q", err, strings.ReplaceAll(tc.wantErr, "FILE", path))
				}
				return
			}
			if err != nil {
				t.Fatalf("readManifests: %v", err)
			}
			var names []string
			for _, m := range got {
				names = append(names, m.name())
			}
			if diff := cmp.Diff(tc.wantNames, names); diff != "" {
				t.Errorf("TFJobs read (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadManifestsFromStdin(t *testing.T) {
	got, err := readManifests([]string{"-"}, strings.NewReader(jobYAML("from-stdin")))
	if err != nil || len(got) != 1 || got[0].object.GetName() != "from-stdin" || got[0].where != "stdin document 1" {
		t.Fatalf("readManifests(-) = %v, %v; want the one job of stdin", got, err)
	}
}

func TestReadManifestsMissingFile(t *testing.T) {
	_, err := readManifests([]string{"/no/such/jobs.yaml"}, nil)
	if err == nil || !isUsageError(err) || err.Error() != "cannot read -f /no/such/jobs.yaml: no such file or directory" {
		t.Fatalf("readManifests = %v, want a usage error naming the file", err)
	}
}

func TestPlaceInNamespace(t *testing.T) {
	inTeam := strings.Replace(jobYAML("a"), "  name: a\n", "  name: a\n  namespace: team\n", 1)
	inOther := strings.Replace(jobYAML("a"), "  name: a\n", "  name: a\n  namespace: other\n", 1)
	for name, tc := range map[string]struct {
		input     string
		flag      string
		wantNames []string
		wantErr   string
	}{
		"no namespace gets the current one":  {input: jobYAML("a") + "---\n" + jobYAML("b"), wantNames: []string{"team/a", "team/b"}},
		"same name in two namespaces":        {input: jobYAML("a") + "---\n" + inOther, wantNames: []string{"team/a", "other/a"}},
		"same job twice":                     {input: jobYAML("a") + "---\n" + jobYAML("a"), wantErr: "FILE document 2: TFJob a is already in FILE document 1: give each TFJob once"},
		"same job, once with its namespace":  {input: jobYAML("a") + "---\n" + inTeam, wantErr: "FILE document 2: TFJob a is already in FILE document 1: give each TFJob once"},
		"same job, once without a namespace": {input: inTeam + "---\n" + jobYAML("a"), wantErr: "FILE document 2: TFJob a is already in FILE document 1: give each TFJob once"},
		"-n disagrees":                       {input: inOther, flag: "team", wantErr: "FILE document 1: TFJob a is in namespace other but -n says team: drop -n or make them agree"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.yaml")
			if err := os.WriteFile(path, []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			manifests, err := readManifests([]string{path}, nil)
			if err != nil {
				t.Fatalf("readManifests: %v", err)
			}
			err = placeInNamespace(manifests, "team", tc.flag)
			if want := strings.ReplaceAll(tc.wantErr, "FILE", path); want != "" {
				if err == nil || !isUsageError(err) || err.Error() != want {
					t.Fatalf("placeInNamespace = %v, want the usage error %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("placeInNamespace: %v", err)
			}
			var names []string
			for _, m := range manifests {
				names = append(names, m.name())
			}
			if diff := cmp.Diff(tc.wantNames, names); diff != "" {
				t.Errorf("TFJobs placed (-want +got):\n%s", diff)
			}
		})
	}
}
