package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// get reads a leading resource name and tfjob/NAME as kubectl does, so
// that `get tfjobs -A` lists rather than looks for a job called tfjobs.
func TestJobNamesOf(t *testing.T) {
	for args, tc := range map[string]struct {
		want    []string
		wantErr bool
	}{
		"":                                {want: []string{}},
		"tfjobs":                          {want: []string{}},
		"TFJob":                           {want: []string{}},
		"tfjobs.kubeflow.org":             {want: []string{}},
		"mnist":                           {want: []string{"mnist"}},
		"tfjob mnist resnet":              {want: []string{"mnist", "resnet"}},
		"tfjob.kubeflow.org/mnist resnet": {want: []string{"mnist", "resnet"}},
		"tfjobs tfjobs":                   {want: []string{"tfjobs"}},
		"pods/mnist":                      {wantErr: true},
		"tfjob/":                          {wantErr: true},
	} {
		got, err := jobNamesOf("get", splitArgs(args))
		if (err != nil) != tc.wantErr {
			t.Errorf("get %s: error %v, want one: %v", args, err, tc.wantErr)
			continue
		}
		if err != nil {
			if !isUsageError(err) {
				t.Errorf("get %s: %v is no usage error", args, err)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("get %s: names (-want +got):\n%s", args, diff)
		}
	}
}
