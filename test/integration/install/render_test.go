//go:build integration

package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/backfill-dev/backfill/test/framework"
)

// chartDir is the chart under test.
func chartDir() string { return filepath.Join(framework.RepoRoot(), "charts", "backfill") }

func helmBinary() string { return filepath.Join(framework.BinDir(), "helm") }

// valueSet is one way of installing the chart: a release name and a
// values file under testdata/values.
type valueSet struct {
	release string
	values  string
	// fixtureFiles renders a copy of the chart whose files/ (generated
	// rules and dashboards) are the small stand-ins of
	// testdata/chart-files, so that its golden file does not change with
	// every rule or panel.
	fixtureFiles bool
}

// valueSets are the renderings with golden files, by name.
var valueSets = map[string]valueSet{
	"default":    {release: "backfill", values: "default.yaml"},
	"ha":         {release: "backfill", values: "ha.yaml"},
	"monitoring": {release: "backfill", values: "monitoring.yaml", fixtureFiles: true},
	"podmonitor": {release: "backfill", values: "podmonitor.yaml"},
	"custom":     {release: "training", values: "custom.yaml"},
	// The report certificate from cert-manager, with the chart's CA or an
	// existing issuer.
	"cert-manager":        {release: "backfill", values: "cert-manager.yaml"},
	"cert-manager-issuer": {release: "backfill", values: "cert-manager-issuer.yaml"},
}

// namespace is where the renderings install to, as config/default does.
const namespace = "backfill-system"

// nodeAgentNamespace is where release backfill's node agent runs, as in
// config/default.
const nodeAgentNamespace = "backfill-node-agent"

// chartFor is the chart directory a value set renders.
func chartFor(t *testing.T, vs valueSet) string {
	t.Helper()
	if !vs.fixtureFiles {
		return chartDir()
	}
	return chartWithFiles(t, filepath.Join("testdata", "chart-files"))
}

// chartWithFiles copies the chart to a temporary directory with files/
// replaced by dir ("" for none).
func chartWithFiles(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "backfill")
	if err := os.CopyFS(dst, os.DirFS(chartDir())); err != nil {
		t.Fatalf("Copying the chart: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dst, "files")); err != nil {
		t.Fatal(err)
	}
	if dir != "" {
		if err := os.CopyFS(filepath.Join(dst, "files"), os.DirFS(dir)); err != nil {
			t.Fatalf("Copying %s into the chart: %v", dir, err)
		}
	}
	return dst
}

// helmTemplate renders a value set; extra flags such as --include-crds
// (the golden files leave the CRD out: `make verify` proves the chart's
// copy current) follow.
func helmTemplate(t *testing.T, vs valueSet, extra ...string) []byte {
	t.Helper()
	args := append([]string{"template", vs.release, chartFor(t, vs), "--namespace", namespace,
		"--values", filepath.Join("testdata", "values", vs.values)}, extra...)
	out, err := framework.Helm(args...)
	if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// kustomize renders a kustomize directory with bin/kubectl.
func kustomize(t *testing.T, dir string) []byte {
	t.Helper()
	cmd := exec.Command(filepath.Join(framework.BinDir(), "kubectl"), "kustomize", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v: %s", dir, err, stderr.String())
	}
	return out
}

// decode splits a multi-document manifest into objects, skipping empty
// documents.
func decode(t *testing.T, manifest []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		obj := map[string]any{}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Decoding the manifest: %v", err)
		}
		if len(obj) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: obj})
	}
	return objs
}

// objectKey names an object by kind, namespace and name.
func objectKey(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", o.GetKind(), ns, o.GetName())
	}
	return fmt.Sprintf("%s %s", o.GetKind(), o.GetName())
}

// byKey indexes objects by objectKey and fails on duplicates.
func byKey(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		k := objectKey(o)
		if _, dup := m[k]; dup {
			t.Errorf("%s is rendered twice", k)
		}
		m[k] = o
	}
	return m
}

// keysOf is the sorted keys of a map.
func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
