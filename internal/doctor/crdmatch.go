package doctor

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/deploy/crds"
)

// CRDName is the TFJob CRD's name.
const CRDName = "tfjobs.kubeflow.org"

// ourCRD is the TFJob CRD this backfill carries (deploy/crds).
var ourCRD = sync.OnceValue(func() *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(crds.TFJob, crd); err != nil {
		panic(fmt.Sprintf("decoding the embedded TFJob CRD: %v", err))
	}
	return crd
})

// applyCRD replaces the CRD in place: server-side, taking over the fields
// another installer owned. Deleting the CRD instead deletes every TFJob.
const applyCRD = "kubectl apply --server-side --force-conflicts -f deploy/crds/kubeflow.org_tfjobs.yaml"

// ownerLabels are the labels by which installers (kustomize's common
// labels, Helm charts) mark what they own, and later prune or delete.
var ownerLabels = []string{
	"app", "app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/part-of",
	"app.kubernetes.io/component", "app.kubernetes.io/managed-by", "control-plane", "kustomize.component",
}

// Helm's marks on what a release holds, and the annotation by which an
// object asks Helm to leave it.
const (
	helmReleaseName      = "meta.helm.sh/release-name"
	helmReleaseNamespace = "meta.helm.sh/release-namespace"
	helmResourcePolicy   = "helm.sh/resource-policy"
)

// checkCRDMatch compares the installed TFJob CRD with backfill's: the
// fields backfill's controller writes and reads (a structural schema
// prunes any it does not declare, so restarts, disruptions and progress
// would vanish at every write), the status subresource it writes through,
// its schema rules (x-kubernetes-validations, which refuse bad TFJobs even
// with no webhook), the versions it stores, and who else may own it.
func checkCRDMatch(s *Snapshot) []Result {
	if s.CRD == nil {
		return []Result{{Check: CheckCRDMatch, Status: StatusSkip, Finding: "not checked: there is no CustomResourceDefinition " + CRDName + " to compare (see tfjob-crd)"}}
	}
	old := oldStoredVersions(s.CRD)
	var out []Result
	if r, bad := crdSchemaResult(s.CRD, len(old) > 0); bad {
		out = append(out, r)
	}
	if len(old) > 0 {
		out = append(out, storedVersionsResult(s.CRD, old))
	}
	if r, bad := crdOwnerResult(s.CRD); bad {
		out = append(out, r)
	}
	if len(out) > 0 {
		return out
	}
	return []Result{ok(CheckCRDMatch, fmt.Sprintf("the TFJob CRD is backfill's: its v1 schema keeps every field backfill writes, has backfill's %d schema rules and the status subresource, and only v1 is stored",
		len(schemaRules(crdVersion(ourCRD(), kubeflowv1.GroupVersion.Version)))))}
}

func crdVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

// crdSchemaResult tells what the installed v1 lacks of backfill's: a FAIL
// when it drops fields or has no status subresource, a WARN when only
// schema rules are missing.
func crdSchemaResult(crd *apiextensionsv1.CustomResourceDefinition, migrateFirst bool) (Result, bool) {
	version := kubeflowv1.GroupVersion.Version
	ours, theirs := crdVersion(ourCRD(), version), crdVersion(crd, version)
	if theirs == nil {
		return Result{Check: CheckCRDMatch, Status: StatusFail, Object: "crd " + CRDName,
			Finding: "the installed TFJob CRD is not backfill's: it has no version " + version + " at all", Fix: replaceCRDFix(migrateFirst)}, true
	}
	var lacks []string
	status := StatusWarn
	if missing := missingFields(ours, theirs); len(missing) > 0 {
		status = StatusFail
		lacks = append(lacks, fmt.Sprintf("its %s schema lacks fields backfill's controller writes or reads (%s), so the apiserver drops them from every TFJob and status write", version, listNames(missing)))
	}
	if theirs.Subresources == nil || theirs.Subresources.Status == nil {
		status = StatusFail
		lacks = append(lacks, "it has no status subresource, through which backfill writes every job's status")
	}
	if missing := missingRules(ours, theirs); len(missing) > 0 {
		lacks = append(lacks, fmt.Sprintf("it lacks %d of backfill's %d schema rules (x-kubernetes-validations), so the apiserver accepts TFJobs backfill cannot run (e.g. none says %q)",
			len(missing), len(schemaRules(ours)), missing[0].Message))
	}
	if len(lacks) == 0 {
		return Result{}, false
	}
	return Result{Check: CheckCRDMatch, Status: status, Object: "crd " + CRDName,
		Finding: "the installed TFJob CRD is not backfill's: " + strings.Join(lacks, "; "), Fix: replaceCRDFix(migrateFirst)}, true
}

// replaceCRDFix says how to put backfill's CRD in place of another, never
// by deleting it.
func replaceCRDFix(migrateFirst bool) string {
	fix := "replace it with backfill's, keeping every TFJob: " + applyCRD +
		" (the Helm chart's copy is charts/backfill/crds/kubeflow.org_tfjobs.yaml). Never kubectl delete crd " + CRDName + ": deleting the CRD deletes every TFJob, and their pods with them"
	if migrateFirst {
		fix = "first move the stored TFJobs to v1 (see the storedVersions finding), then " + fix
	}
	return fix
}

// fieldPath is a path into a schema: property names, "*" for a map's
// values and "[]" for a list's items.
type fieldPath []string

func (p fieldPath) String() string {
	return strings.ReplaceAll(strings.Join(p, "."), ".[]", "[]")
}

// missingFields are the fields of ours that theirs would prune, the
// topmost of each missing subtree. Only spec and status are compared, and
// not the pod templates: those are Kubernetes' own and differ with the
// Kubernetes version a CRD was generated for.
func missingFields(ours, theirs *apiextensionsv1.CustomResourceDefinitionVersion) []string {
	if ours.Schema == nil || ours.Schema.OpenAPIV3Schema == nil {
		return nil
	}
	var theirRoot *apiextensionsv1.JSONSchemaProps
	if theirs.Schema != nil {
		theirRoot = theirs.Schema.OpenAPIV3Schema
	}
	var missing []string
	var walk func(s *apiextensionsv1.JSONSchemaProps, path fieldPath)
	walk = func(s *apiextensionsv1.JSONSchemaProps, path fieldPath) {
		if len(path) > 0 && !keeps(theirRoot, path) {
			missing = append(missing, path.String())
			return
		}
		if path.String() == "spec.tfReplicaSpecs.*.template" {
			return
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			if len(path) == 0 && name != "spec" && name != "status" {
				continue
			}
			child := s.Properties[name]
			walk(&child, append(slices.Clone(path), name))
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(s.Items.Schema, append(slices.Clone(path), "[]"))
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema, append(slices.Clone(path), "*"))
		}
	}
	walk(ours.Schema.OpenAPIV3Schema, nil)
	return missing
}

// keeps says a schema keeps the field at path: it declares it, or an
// enclosing object preserves unknown fields.
func keeps(s *apiextensionsv1.JSONSchemaProps, path fieldPath) bool {
	for _, name := range path {
		if s == nil {
			return false
		}
		if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
			return true
		}
		switch name {
		case "[]":
			if s.Items == nil {
				return false
			}
			s = s.Items.Schema
		case "*":
			if s.AdditionalProperties == nil {
				return false
			}
			if s.AdditionalProperties.Schema == nil {
				return s.AdditionalProperties.Allows
			}
			s = s.AdditionalProperties.Schema
		default:
			child, found := s.Properties[name]
			if !found {
				return false
			}
			s = &child
		}
	}
	return s != nil
}

// schemaRules are the x-kubernetes-validations of a version's schema.
func schemaRules(v *apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.ValidationRule {
	if v == nil || v.Schema == nil {
		return nil
	}
	var rules []apiextensionsv1.ValidationRule
	var walk func(s *apiextensionsv1.JSONSchemaProps)
	walk = func(s *apiextensionsv1.JSONSchemaProps) {
		if s == nil {
			return
		}
		rules = append(rules, s.XValidations...)
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			child := s.Properties[name]
			walk(&child)
		}
		if s.Items != nil {
			walk(s.Items.Schema)
		}
		if s.AdditionalProperties != nil {
			walk(s.AdditionalProperties.Schema)
		}
	}
	walk(v.Schema.OpenAPIV3Schema)
	return rules
}

// missingRules are backfill's rules that theirs does not have (by rule).
func missingRules(ours, theirs *apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.ValidationRule {
	have := map[string]bool{}
	for _, r := range schemaRules(theirs) {
		have[r.Rule] = true
	}
	var missing []apiextensionsv1.ValidationRule
	for _, r := range schemaRules(ours) {
		if !have[r.Rule] {
			missing = append(missing, r)
		}
	}
	return missing
}

// oldStoredVersions are the versions other than v1 that TFJobs may still
// be stored in, by the CRD's status.storedVersions and storage version.
func oldStoredVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var old []string
	for _, v := range crd.Status.StoredVersions {
		if v != kubeflowv1.GroupVersion.Version {
			old = append(old, v)
		}
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage && v.Name != kubeflowv1.GroupVersion.Version && !slices.Contains(old, v.Name) {
			old = append(old, v.Name)
		}
	}
	return old
}

func storedVersionsResult(crd *apiextensionsv1.CustomResourceDefinition, old []string) Result {
	finding := fmt.Sprintf("TFJobs written by an older Kubeflow may still be stored as %s (the CRD's status.storedVersions is [%s]",
		strings.Join(old, ", "), strings.Join(crd.Status.StoredVersions, " "))
	for _, v := range crd.Spec.Versions {
		if v.Storage && v.Name != kubeflowv1.GroupVersion.Version {
			finding += ", and it stores new ones as " + v.Name
		}
	}
	finding += "): backfill's CRD has v1 only, and the apiserver refuses it while an old version is listed there"
	return Result{Check: CheckCRDMatch, Status: StatusWarn, Object: "crd " + CRDName, Finding: finding,
		Fix: "migrate the stored TFJobs to v1, then drop the old versions: kubectl get tfjobs -A -o json | kubectl replace -f - (rewrites every TFJob in the storage version, v1; repeat on a conflict), then kubectl patch crd " + CRDName +
			` --subresource=status --type=merge -p '{"status":{"storedVersions":["v1"]}}', then ` + applyCRD}
}

// crdOwnerResult names another installer's marks on the CRD: its labels,
// by which that installer prunes or deletes what it owns, and Helm's
// release annotations, by which uninstalling the release deletes the CRD
// and every TFJob with it.
func crdOwnerResult(crd *apiextensionsv1.CustomResourceDefinition) (Result, bool) {
	var marks, removals, fixes []string
	for _, key := range ownerLabels {
		if v, found := crd.Labels[key]; found && !strings.Contains(v, "backfill") {
			marks = append(marks, key+"="+v)
			removals = append(removals, key+"-")
		}
	}
	var finding []string
	if len(marks) > 0 {
		finding = append(finding, fmt.Sprintf("it carries another installer's labels (%s): deleting or pruning that install by its labels would delete the CRD and every TFJob with it", strings.Join(marks, ", ")))
		fixes = append(fixes, "kubectl label crd "+CRDName+" "+strings.Join(removals, " "))
	}
	if release := crd.Annotations[helmReleaseName]; release != "" {
		ref := crd.Annotations[helmReleaseNamespace] + "/" + release
		finding = append(finding, fmt.Sprintf("Helm release %s holds it (%s): helm uninstall of that release deletes the CRD and every TFJob with it, and its upgrades overwrite backfill's schema", ref, helmReleaseName))
		// helm uninstall deletes what the release's stored manifest lists,
		// whatever the live object says; an upgrade that drops an object
		// leaves it when the live object asks to be kept.
		fixes = append(fixes, fmt.Sprintf("kubectl annotate crd %s %s=keep, then helm upgrade %s (-n %s) with the TFJob CRD left out of its chart (Helm leaves a dropped object that asks to be kept), then kubectl annotate crd %s %s- %s- %s-; never helm uninstall %s before that",
			CRDName, helmResourcePolicy, release, crd.Annotations[helmReleaseNamespace], CRDName, helmReleaseName, helmReleaseNamespace, helmResourcePolicy, release))
	}
	if len(finding) == 0 {
		return Result{}, false
	}
	return Result{Check: CheckCRDMatch, Status: StatusWarn, Object: "crd " + CRDName,
		Finding: "the TFJob CRD belongs to another install: " + strings.Join(finding, "; "),
		Fix:     "make it backfill's alone, keeping every TFJob: " + strings.Join(fixes, "; ") + "; then " + applyCRD}, true
}
