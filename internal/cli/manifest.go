package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	strictjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// manifest is one TFJob document of a file given to submit.
type manifest struct {
	where  string // "FILE document N", for messages
	object *unstructured.Unstructured
}

// name is "namespace/name" of the manifest's TFJob.
func (m *manifest) name() string { return m.object.GetNamespace() + "/" + m.object.GetName() }

// readManifests reads every document of the files ("-" is stdin) and
// checks each strictly against the TFJob API: a document that is not a
// TFJob, has an unknown or duplicate field, or no name is a usage error
// naming the file, the document and the field. The same TFJob given twice
// is found by placeInNamespace, once every TFJob has its namespace.
func readManifests(paths []string, stdin io.Reader) ([]manifest, error) {
	var all []manifest
	for _, path := range paths {
		data, err := readSource(path, stdin)
		if err != nil {
			return nil, usageError{err}
		}
		docs, err := splitDocuments(data)
		if err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", sourceName(path), err)}
		}
		for i, doc := range docs {
			where := fmt.Sprintf("%s document %d", sourceName(path), i+1)
			obj, err := decodeTFJob(doc)
			if err != nil {
				return nil, usageError{fmt.Errorf("%s: %w", where, err)}
			}
			all = append(all, manifest{where: where, object: obj})
		}
	}
	if len(all) == 0 {
		return nil, usageError{fmt.Errorf("no TFJob in %s", strings.Join(paths, ", "))}
	}
	return all, nil
}

func sourceName(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}

func readSource(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read -f %s: %w", path, errors.Unwrap(err))
	}
	return data, nil
}

// splitDocuments splits a YAML stream (or one JSON object) into its
// non-empty documents.
func splitDocuments(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %s", oneLine(err))
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

// stripComments drops comment lines, so that a document of comments only
// counts as empty.
func stripComments(doc []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.SplitSeq(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// oneLine joins a multi-line message (the YAML parser's) into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// decodeTFJob checks one document and returns it as the user wrote it,
// which is what gets applied.
func decodeTFJob(doc []byte) (*unstructured.Unstructured, error) {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %s", oneLine(err))
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	if gvk := obj.GroupVersionKind(); gvk.GroupVersion() != kubeflowv1.GroupVersion || gvk.Kind != "TFJob" {
		return nil, fmt.Errorf("%s %q is not a TFJob: submit takes apiVersion kubeflow.org/v1, kind TFJob (use kubectl apply for other objects)",
			orNone(obj.GetKind()), obj.GetAPIVersion())
	}
	var job kubeflowv1.TFJob
	strict, err := strictjson.UnmarshalStrict(data, &job)
	if err != nil {
		return nil, fmt.Errorf("not a valid TFJob: %w", err)
	}
	if len(strict) > 0 {
		var msgs []string
		for _, e := range strict {
			msgs = append(msgs, e.Error())
		}
		return nil, fmt.Errorf("%s (check the spelling against `kubectl explain tfjob.spec`)", strings.Join(msgs, "; "))
	}
	if obj.GetName() == "" {
		return nil, errors.New("metadata.name is missing: every TFJob needs a name")
	}
	// The apiserver cannot check an annotation; the operator would hold
	// the job.
	if err := colocation.ValidateCapacity(job.Annotations); err != nil {
		return nil, err
	}
	delete(obj.Object, "status") // the operator owns it
	return obj, nil
}
