package doctor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// v1Schema is the installed CRD's v1 version, for a test to change.
func v1Schema(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionVersion {
	return crdVersion(crd, "v1")
}

// withoutBackfillStatus drops the status fields backfill adds to v1's.
func withoutBackfillStatus(crd *apiextensionsv1.CustomResourceDefinition) {
	status := v1Schema(crd).Schema.OpenAPIV3Schema.Properties["status"]
	for _, f := range []string{"restarts", "disruptions", "countedPods", "progress", "goodput"} {
		delete(status.Properties, f)
	}
	v1Schema(crd).Schema.OpenAPIV3Schema.Properties["status"] = status
}

// withoutRules drops every x-kubernetes-validations rule.
func withoutRules(s *apiextensionsv1.JSONSchemaProps) {
	s.XValidations = nil
	for name, child := range s.Properties {
		withoutRules(&child)
		s.Properties[name] = child
	}
	if s.Items != nil && s.Items.Schema != nil {
		withoutRules(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		withoutRules(s.AdditionalProperties.Schema)
	}
}

func TestCheckCRDMatch(t *testing.T) {
	ourRules := len(schemaRules(v1Schema(ourCRD())))
	if ourRules < 10 {
		t.Fatalf("backfill's CRD has %d schema rules; the test expects its many", ourRules)
	}
	cases := map[string]struct {
		change      func(crd *apiextensionsv1.CustomResourceDefinition)
		want        []verdict
		wantFinding []string
		wantFix     []string
	}{
		"backfill's": {
			change:      func(*apiextensionsv1.CustomResourceDefinition) {},
			want:        []verdict{{CheckCRDMatch, StatusOK, ""}},
			wantFinding: []string{"the TFJob CRD is backfill's", fmt.Sprintf("has backfill's %d schema rules", ourRules)},
		},
		"Kubeflow's schema: no backfill status fields, no rules": {
			change: func(crd *apiextensionsv1.CustomResourceDefinition) {
				withoutBackfillStatus(crd)
				withoutRules(v1Schema(crd).Schema.OpenAPIV3Schema)
			},
			want: []verdict{{CheckCRDMatch, StatusFail, "crd tfjobs.kubeflow.org"}},
			wantFinding: []string{
				"the installed TFJob CRD is not backfill's: its v1 schema lacks fields backfill's controller writes or reads (status.countedPods, status.disruptions, status.goodput and 2 more), so the apiserver drops them",
				fmt.Sprintf("it lacks %d of backfill's %d schema rules (x-kubernetes-validations)", ourRules, ourRules),
			},
			wantFix: []string{"kubectl apply --server-side --force-conflicts -f deploy/crds/kubeflow.org_tfjobs.yaml", "Never kubectl delete crd tfjobs.kubeflow.org"},
		},
		"a field deep in the status": {
			change: func(crd *apiextensionsv1.CustomResourceDefinition) {
				rs := v1Schema(crd).Schema.OpenAPIV3Schema.Properties["status"].Properties["replicaStatuses"]
				delete(rs.AdditionalProperties.Schema.Properties, "succeededIndexes")
			},
			want:        []verdict{{CheckCRDMatch, StatusFail, "crd tfjobs.kubeflow.org"}},
			wantFinding: []string{"(status.replicaStatuses.*.succeededIndexes)"},
		},
		"a schema that keeps unknown fields, without rules": {
			change: func(crd *apiextensionsv1.CustomResourceDefinition) {
				v1Schema(crd).Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
			},
			want:        []verdict{{CheckCRDMatch, StatusWarn, "crd tfjobs.kubeflow.org"}},
			wantFinding: []string{fmt.Sprintf("it lacks %d of backfill's %d schema rules", ourRules, ourRules), `e.g. none says "metadata.name must be a DNS-1035 label`},
		},
		"no status subresource": {
			change:      func(crd *apiextensionsv1.CustomResourceDefinition) { v1Schema(crd).Subresources = nil },
			want:        []verdict{{CheckCRDMatch, StatusFail, "crd tfjobs.kubeflow.org"}},
			wantFinding: []string{"it has no status subresource"},
		},
		"an old stored version": {
			change: func(crd *apiextensionsv1.CustomResourceDefinition) {
				withoutBackfillStatus(crd)
				crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta2", Served: true})
				crd.Status.StoredVersions = []string{"v1beta2", "v1"}
			},
			want: []verdict{{CheckCRDMatch, StatusFail, "crd tfjobs.kubeflow.org"}, {CheckCRDMatch, StatusWarn, "crd tfjobs.kubeflow.org"}},
			wantFix: []string{
				"first move the stored TFJobs to v1 (see the storedVersions finding), then replace it with backfill's",
				"kubectl get tfjobs -A -o json | kubectl replace -f -",
				`kubectl patch crd tfjobs.kubeflow.org --subresource=status --type=merge -p '{"status":{"storedVersions":["v1"]}}'`,
			},
			wantFinding: []string{"TFJobs written by an older Kubeflow may still be stored as v1beta2 (the CRD's status.storedVersions is [v1beta2 v1]): backfill's CRD has v1 only, and the apiserver refuses it while an old version is listed there"},
		},
		"another installer's labels and Helm release": {
			change: func(crd *apiextensionsv1.CustomResourceDefinition) {
				crd.Labels = map[string]string{"app.kubernetes.io/name": "tf-job-operator", "app": "tf-job-operator", "app.kubernetes.io/managed-by": "Helm", "team": "ml"}
				crd.Annotations = map[string]string{helmReleaseName: "training-operator", helmReleaseNamespace: "kubeflow"}
			},
			want: []verdict{{CheckCRDMatch, StatusWarn, "crd tfjobs.kubeflow.org"}},
			wantFinding: []string{
				"it carries another installer's labels (app=tf-job-operator, app.kubernetes.io/name=tf-job-operator, app.kubernetes.io/managed-by=Helm)",
				"Helm release kubeflow/training-operator holds it (meta.helm.sh/release-name): helm uninstall of that release deletes the CRD and every TFJob with it",
			},
			wantFix: []string{
				"kubectl label crd tfjobs.kubeflow.org app- app.kubernetes.io/name- app.kubernetes.io/managed-by-",
				"kubectl annotate crd tfjobs.kubeflow.org helm.sh/resource-policy=keep, then helm upgrade training-operator (-n kubeflow) with the TFJob CRD left out",
				"never helm uninstall training-operator before that",
			},
		},
		"no v1 at all": {
			change: func(crd *apiextensionsv1.CustomResourceDefinition) {
				crd.Spec.Versions[0].Name = "v1beta2"
				crd.Status.StoredVersions = []string{"v1beta2"}
			},
			want:        []verdict{{CheckCRDMatch, StatusFail, "crd tfjobs.kubeflow.org"}, {CheckCRDMatch, StatusWarn, "crd tfjobs.kubeflow.org"}},
			wantFinding: []string{"it has no version v1 at all", "may still be stored as v1beta2 (the CRD's status.storedVersions is [v1beta2], and it stores new ones as v1beta2)"},
			wantFix:     []string{"kubectl apply --server-side --force-conflicts"},
		},
		"backfill's own labels": {
			change: func(crd *apiextensionsv1.CustomResourceDefinition) {
				crd.Labels = map[string]string{"app.kubernetes.io/name": "backfill", "app.kubernetes.io/part-of": "backfill"}
			},
			want: []verdict{{CheckCRDMatch, StatusOK, ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			tc.change(s.CRD)
			got := checkCRDMatch(s)
			if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s\n%+v", diff, got)
			}
			all := func(f func(Result) string) string {
				var parts []string
				for _, r := range got {
					parts = append(parts, f(r))
				}
				return strings.Join(parts, "\n")
			}
			findings, fixes := all(func(r Result) string { return r.Finding }), all(func(r Result) string { return r.Fix })
			for _, want := range tc.wantFinding {
				if !strings.Contains(findings, want) {
					t.Errorf("findings %q: want %q in them", findings, want)
				}
			}
			for _, want := range tc.wantFix {
				if !strings.Contains(fixes, want) {
					t.Errorf("fixes %q: want %q in them", fixes, want)
				}
			}
		})
	}
}

func TestCheckCRDMatchWithoutCRD(t *testing.T) {
	s := snapshot()
	s.CRD = nil
	if got := checkCRDMatch(s); len(got) != 1 || got[0].Status != StatusSkip {
		t.Errorf("got %+v, want one SKIP", got)
	}
}
