package doctor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// checkQuota finds the active jobs whose pods a ResourceQuota of their
// namespace refuses: the apiserver's refusal the operator recorded, and
// what the quotas say of the pods the operator sends (on reclaimed
// capacity: cpu and memory requests of 0, the templates' limits and the
// batch resources).
func checkQuota(refusals []jobRefusal) []Result {
	return refusalResults(refusals, CheckResourceQuota, "no TFJob pod is held back by a ResourceQuota")
}

// predictQuota is what the namespace's quotas say of a job's missing
// pods, each as LimitRanger made it: the cpu and memory a quota counts
// that a container does not state, usage the quota controller has not
// counted, and each resource that has no room for all of them.
func predictQuota(quotas []*corev1.ResourceQuota, pods []missingReplicas) []quotaViolation {
	var out []quotaViolation
	for _, q := range quotas {
		var charges []corev1.ResourceList
		missing := map[corev1.ResourceName][]string{}
		for _, m := range pods {
			if !quotaApplies(q, m.pod) {
				continue
			}
			for name, containers := range missingFromContainers(q, m.pod) {
				for _, c := range containers {
					if !slices.Contains(missing[name], c) {
						missing[name] = append(missing[name], c)
					}
				}
			}
			charge := quotaCharge(m.pod)
			for range m.missing {
				charges = append(charges, charge)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(missing)) {
			slices.Sort(missing[name])
			out = append(out, quotaViolation{quota: q.Name, rule: quotaMustSpecify, resource: name, containers: missing[name]})
		}
		out = append(out, quotaShortfalls(q, charges)...)
	}
	return out
}

// quotaShortfalls are the resources of a quota, of those the pods of
// charges count, without room for all of them, or whose usage is not
// counted yet.
func quotaShortfalls(q *corev1.ResourceQuota, charges []corev1.ResourceList) []quotaViolation {
	var out []quotaViolation
	for _, name := range sortedNames(q.Status.Hard) {
		if !slices.ContainsFunc(charges, func(c corev1.ResourceList) bool { _, ok := c[name]; return ok }) {
			continue
		}
		used, known := q.Status.Used[name]
		if !known {
			out = append(out, quotaViolation{quota: q.Name, rule: quotaStatusUnknown, resource: name})
			continue
		}
		// The pods in turn, as the operator creates them: those that
		// fit before the first that does not.
		hard := q.Status.Hard[name]
		total, room := used.DeepCopy(), 0
		var most resource.Quantity
		for _, charge := range charges {
			need := charge[name]
			if need.Cmp(most) > 0 {
				most = need.DeepCopy()
			}
			total.Add(need)
			if total.Cmp(hard) <= 0 {
				room++
			}
		}
		if room < len(charges) {
			out = append(out, quotaViolation{quota: q.Name, rule: quotaExceeded, resource: name, used: used, hard: hard, need: most, pods: len(charges), room: room})
		}
	}
	return out
}

// quotaReasons are the quota rules that refuse a job's pods: those the
// quotas predict for the pods the operator sends (FAIL), and those the
// apiserver named in its last refusal that the quotas no longer predict
// (WARN: the quota changed, or is gone, so the operator's next try
// should succeed).
func quotaReasons(s *Snapshot, j *kubeflowv1.TFJob, predicted []quotaViolation, ev *refusalEvent, reclaimed bool) []refusalReason {
	type judged struct {
		v         quotaViolation
		resources []corev1.ResourceName
		reason    refusalReason
	}
	var all []judged
	confirmed := make([]bool, len(predicted))
	if ev != nil {
		for _, e := range ev.parsed.quotas {
			if i := slices.IndexFunc(predicted, e.sameRule); i >= 0 {
				confirmed[i] = true
				continue
			}
			r := refusalReason{check: CheckResourceQuota, status: StatusFail, seen: true}
			if e.quota != "" {
				r.status = StatusWarn
			}
			all = append(all, judged{v: e, reason: r})
		}
	}
	for i, p := range predicted {
		all = append(all, judged{v: p, reason: refusalReason{check: CheckResourceQuota, status: StatusFail, seen: confirmed[i]}})
	}
	// One sentence for the cpu and memory resources a quota wants stated
	// by the same containers.
	var grouped []judged
	for _, g := range all {
		i := slices.IndexFunc(grouped, func(o judged) bool {
			return g.v.rule == quotaMustSpecify && o.v.rule == quotaMustSpecify && o.v.quota == g.v.quota &&
				slices.Equal(o.v.containers, g.v.containers) && o.reason == g.reason
		})
		if i < 0 {
			g.resources = []corev1.ResourceName{g.v.resource}
			grouped = append(grouped, g)
			continue
		}
		grouped[i].resources = append(grouped[i].resources, g.v.resource)
	}
	var out []refusalReason
	for _, g := range grouped {
		r := g.reason
		r.finding, r.fix = quotaReason(g.v, g.resources, j, reclaimed)
		if r.status == StatusWarn {
			r.finding += "; " + admitsNow(s, j.Namespace, g.v.quota)
			r.fix = retryFix
		}
		out = append(out, r)
	}
	return out
}

// sameRule: two violations name the same rule of the same quota.
func (v quotaViolation) sameRule(o quotaViolation) bool {
	return v.quota == o.quota && v.rule == o.rule && v.resource == o.resource
}

// admitsNow says why a quota the apiserver named no longer refuses.
func admitsNow(s *Snapshot, namespace, name string) string {
	if slices.ContainsFunc(s.quotasOf(namespace), func(q *corev1.ResourceQuota) bool { return q.Name == name }) {
		return fmt.Sprintf("ResourceQuota %s admits the pods now", name)
	}
	return fmt.Sprintf("ResourceQuota %s no longer exists", name)
}

// retryFix is the fix of a refusal whose rule admits the pods now.
const retryFix = "nothing, if the operator's next try creates the pods: it retries with a growing back-off; if they do not appear, read the job's events (kubectl describe tfjob) and the manager's log"

// quotaReason says what a quota violation means for a job, and its fix;
// resources are those of a must-specify.
func quotaReason(v quotaViolation, resources []corev1.ResourceName, j *kubeflowv1.TFJob, reclaimed bool) (finding, fix string) {
	edit := fmt.Sprintf("kubectl edit resourcequota %s -n %s, or ask the namespace's administrator", v.quota, j.Namespace)
	switch v.rule {
	case quotaMustSpecify:
		return fmt.Sprintf("ResourceQuota %s counts %s, which container(s) %s do not state (a quota on cpu or memory makes every container state it)",
			v.quota, joinNames(resources), strings.Join(v.containers, ", ")), mustSpecifyFix(resources, v.containers, j, reclaimed)
	case quotaStatusUnknown:
		return fmt.Sprintf("ResourceQuota %s has not counted its usage of %s yet, so the apiserver refuses every pod that uses it", v.quota, v.resource),
			fmt.Sprintf("the quota controller of kube-controller-manager counts it: check that it runs (its --controllers include resourcequota) and its log; kubectl describe resourcequota %s -n %s shows Used", v.quota, j.Namespace)
	case quotaNotCovered:
		return fmt.Sprintf("the apiserver admits no pod that uses %s without a ResourceQuota covering it (its admission configuration's limitedResources), and none in the namespace does", v.resource),
			fmt.Sprintf("ask the cluster's administrator for a ResourceQuota in namespace %s that covers %s", j.Namespace, v.resource)
	}
	finding = fmt.Sprintf("ResourceQuota %s: %s used %s of %s", v.quota, quotaResourceWords(v.resource), showQuota(v.resource, v.used), showQuota(v.resource, v.hard))
	if v.need.IsZero() {
		finding += fmt.Sprintf(", over its hard limit already: it admits no pod that counts %s, not even one asking 0", v.resource)
	} else {
		finding += fmt.Sprintf(", a pod needs %s more", showQuota(v.resource, v.need))
	}
	if v.pods > 1 {
		finding += fmt.Sprintf(" (room for %d of the %d missing pods)", v.room, v.pods)
	}
	return finding, exceededFix(v, edit, reclaimed)
}

func mustSpecifyFix(resources []corev1.ResourceName, containers []string, j *kubeflowv1.TFJob, reclaimed bool) string {
	var fields []string
	limits, requests := false, false
	for _, r := range resources {
		kind := "requests"
		if strings.HasPrefix(string(r), "limits.") {
			kind, limits = "limits", true
		} else {
			requests = true
		}
		if f := "resources." + kind + "." + string(resourceOf(r)); !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	fix := fmt.Sprintf("set %s of container(s) %s in the job's templates (kubectl edit tfjob %s -n %s)",
		strings.Join(fields, ", "), strings.Join(containers, ", "), j.Name, j.Namespace)
	if reclaimed && limits {
		fix += " (on reclaimed capacity the pods keep the templates' limits and request 0 cpu and memory)"
	}
	var defaults []string
	if limits {
		defaults = append(defaults, "a default limit (spec.limits[].default)")
	}
	if requests {
		defaults = append(defaults, "a default request (spec.limits[].defaultRequest)")
	}
	return fix + ", or ask the namespace's owner for a LimitRange with " + strings.Join(defaults, " and ")
}

func exceededFix(v quotaViolation, edit string, reclaimed bool) string {
	raise := fmt.Sprintf("raise %s of ResourceQuota %s (%s)", v.resource, v.quota, edit)
	r := resourceOf(v.resource)
	switch {
	case r == corev1.ResourcePods:
		return raise + ", or run fewer replicas"
	case r == colocation.ResourceBatchCPU || r == colocation.ResourceBatchMemory:
		return fmt.Sprintf("this quota caps the namespace's reclaimed capacity (each pod asks its template's %s request as %s): %s, wait for other training in the namespace to finish, or lower the templates' %s requests or the replicas",
			batchSource(r), r, raise, batchSource(r))
	case strings.HasPrefix(string(v.resource), "limits.") && reclaimed:
		return fmt.Sprintf("the pods keep their templates' %s limits, which this quota counts: %s, wait for other work in the namespace to finish, or lower the templates' %s limits or the replicas", r, raise, r)
	}
	return raise + ", wait for other work in the namespace to finish, or ask less per pod or run fewer replicas"
}

// resourceOf is the resource a quota resource counts: cpu of
// limits.cpu, nvidia.com/gpu of requests.nvidia.com/gpu.
func resourceOf(name corev1.ResourceName) corev1.ResourceName {
	n := strings.TrimPrefix(strings.TrimPrefix(string(name), "requests."), "limits.")
	if n == "count/pods" {
		n = "pods"
	}
	return corev1.ResourceName(n)
}

// batchSource is the template resource a batch resource is made of.
func batchSource(batch corev1.ResourceName) string {
	if batch == colocation.ResourceBatchCPU {
		return "cpu"
	}
	return "memory"
}

// quotaResourceWords names a quota resource, saying what a batch
// resource is.
func quotaResourceWords(name corev1.ResourceName) string {
	switch resourceOf(name) {
	case colocation.ResourceBatchCPU:
		return string(name) + " (reclaimed CPU)"
	case colocation.ResourceBatchMemory:
		return string(name) + " (reclaimed memory)"
	}
	return string(name)
}

// showQuota prints an amount of a quota resource; batch-cpu's milli-CPU
// as CPU.
func showQuota(name corev1.ResourceName, q resource.Quantity) string {
	switch resourceOf(name) {
	case colocation.ResourceBatchCPU:
		return colocation.CPUString(q.Value())
	case colocation.ResourceBatchMemory:
		return colocation.MemoryString(q.Value())
	}
	return show(q)
}
