package doctor

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

func findClass(classes []schedulingv1.PriorityClass, name string) *schedulingv1.PriorityClass {
	for i := range classes {
		if classes[i].Name == name {
			return &classes[i]
		}
	}
	return nil
}

// checkPriorityClassMissing finds active jobs naming a PriorityClass that
// does not exist: the apiserver would refuse their pods, so the operator
// creates none and says so in the job's Created condition
// (PriorityClassNotFound) and an event.
func checkPriorityClassMissing(s *Snapshot, jobs []*kubeflowv1.TFJob) []Result {
	var out []Result
	for _, j := range jobs {
		var missing []string
		for _, name := range colocation.JobPriorityClasses(j, s.OfflinePriorityClass) {
			if findClass(s.PriorityClasses, name) == nil {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			continue
		}
		finding := fmt.Sprintf("PriorityClass %s does not exist, so the job's pods cannot be created", strings.Join(missing, ", "))
		if blockedByPriorityClass(j) {
			finding += " (the operator holds the job: Created=False, reason " + reasonPriorityClassNotFound + ")"
		}
		out = append(out, Result{
			Check: CheckPriorityClassMissing, Status: StatusFail, Object: jobRef(j), Finding: finding,
			Fix: fmt.Sprintf("create it below every online pod (kubectl create priorityclass %s --value=-100 --preemption-policy=Never), or set spec.runPolicy.schedulingPolicy.priorityClass to an existing class such as %s",
				missing[0], s.OfflinePriorityClass),
		})
	}
	if len(out) == 0 {
		return []Result{ok(CheckPriorityClassMissing, "every PriorityClass the TFJobs name exists")}
	}
	return out
}

// checkOfflinePriority guards against the value-100 trap: a training
// PriorityClass at or above an online pod's priority lets training preempt
// online services, and a class that may preempt takes capacity instead of
// waiting for idle capacity. The offline classes are the default offline
// class and every class the TFJobs and their pods use; online pods are
// all the others (colocation.PodTier).
func checkOfflinePriority(s *Snapshot) []Result {
	bar, barPod := lowestOnlinePriority(s)
	var out []Result
	for _, name := range s.offlineClasses() {
		pc := findClass(s.PriorityClasses, name)
		if pc == nil {
			if name == s.OfflinePriorityClass {
				out = append(out, Result{
					Check: CheckOfflinePriority, Status: StatusWarn, Object: "priorityclass " + name,
					Finding: "the default offline PriorityClass does not exist; the manager creates it when it starts",
					Fix:     "start the manager, or create it: kubectl create priorityclass " + name + " --value=-100 --preemption-policy=Never",
				})
			}
			continue
		}
		out = append(out, classFindings(pc, bar, barPod)...)
	}
	if len(out) == 0 {
		return []Result{ok(CheckOfflinePriority, fmt.Sprintf("offline PriorityClasses are below every online pod (lowest online priority %d) and never preempt", bar))}
	}
	return out
}

// classFindings judges one offline class against the online bar.
func classFindings(pc *schedulingv1.PriorityClass, bar int32, barPod string) []Result {
	var out []Result
	ref := "priorityclass " + pc.Name
	if pc.Value >= bar {
		out = append(out, Result{
			Check: CheckOfflinePriority, Status: StatusFail, Object: ref,
			Finding: fmt.Sprintf("training runs at priority %d, not below online pods (lowest online priority %d, %s): training can preempt online services and is never preempted by them", pc.Value, bar, barPod),
			Fix: fmt.Sprintf("a class's value cannot change: kubectl delete priorityclass %s && kubectl create priorityclass %s --value=-100 --preemption-policy=Never (or point the jobs at %s)",
				pc.Name, pc.Name, colocation.DefaultOfflinePriorityClass),
		})
	}
	if pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptNever {
		out = append(out, Result{
			Check: CheckOfflinePriority, Status: StatusWarn, Object: ref,
			Finding: "training may preempt lower-priority pods (preemptionPolicy PreemptLowerPriority): offline work should wait for idle capacity, not take it",
			Fix:     fmt.Sprintf("recreate it with --preemption-policy=Never: kubectl delete priorityclass %s && kubectl create priorityclass %s --value=%d --preemption-policy=Never", pc.Name, pc.Name, min(pc.Value, colocation.DefaultOfflinePriority)),
		})
	}
	return out
}

// offlineClasses are the default offline class and those the jobs and
// their pods use, in order.
func (s *Snapshot) offlineClasses() []string {
	names := []string{s.OfflinePriorityClass}
	add := func(n string) {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for i := range s.Jobs {
		for _, n := range colocation.JobPriorityClasses(&s.Jobs[i], s.OfflinePriorityClass) {
			add(n)
		}
	}
	for i := range s.Pods {
		if _, ok := colocation.ControllingTFJob(&s.Pods[i]); ok {
			add(s.Pods[i].Spec.PriorityClassName)
		}
	}
	return names
}

// lowestOnlinePriority is the lowest priority of a live online pod, and
// which pod; never above the priority a pod without a class gets (0, or
// the global default class's value), since the next online pod may have
// none.
func lowestOnlinePriority(s *Snapshot) (int32, string) {
	bar, who := int32(0), "the priority of a pod without a PriorityClass"
	for i := range s.PriorityClasses {
		if pc := &s.PriorityClasses[i]; pc.GlobalDefault {
			bar, who = pc.Value, "the global default PriorityClass "+pc.Name
		}
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if colocation.PodTier(p, s.OfflinePriorityClass) != colocation.TierOnline || p.Spec.Priority == nil {
			continue
		}
		if *p.Spec.Priority < bar {
			bar, who = *p.Spec.Priority, "pod "+p.Namespace+"/"+p.Name
		}
	}
	return bar, who
}
