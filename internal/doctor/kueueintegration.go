package doctor

import (
	"fmt"
	"slices"
	"strings"
	"time"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// workloadGrace is how long a TFJob with a queue-name label may go without
// a Workload before doctor blames Kueue's configuration: with its TFJob
// integration on, Kueue makes the Workload within a second of the job.
const workloadGrace = 30 * time.Second

// restartKueue restarts Kueue as its standard install deploys it; Kueue
// reads its configuration only when it starts.
const restartKueue = "kubectl -n " + queueing.ConfigNamespace + " rollout restart deployment kueue-controller-manager"

// checkKueueIntegration finds TFJobs that ask for a Kueue queue (the
// queue-name label) that Kueue does not manage: Kueue is not installed, so
// the label does nothing; or Kueue keeps no Workload for a job older than
// workloadGrace, so its TFJob integration is off and Kueue neither
// suspends nor admits the job. Jobs left suspended never start (a FAIL);
// the others run outside the queue's quota (a WARN).
func checkKueueIntegration(s *Snapshot) []Result {
	var labelled []*kubeflowv1.TFJob
	for i := range s.Jobs {
		if j := &s.Jobs[i]; queueing.QueueName(j) != "" && !jobFinished(j) {
			labelled = append(labelled, j)
		}
	}
	installed := "Kueue is not installed"
	if s.Kueue.Served {
		installed = "Kueue is installed"
	}
	if len(labelled) == 0 {
		return []Result{ok(CheckKueueIntegration, fmt.Sprintf("no TFJob carries the %s label (%s)", queueing.QueueNameLabel, installed))}
	}
	if !s.Kueue.Served {
		return []Result{withoutKueue(labelled)}
	}
	var unseen []*kubeflowv1.TFJob
	young := 0
	for _, j := range labelled {
		switch {
		case s.Kueue.Workloads[j.UID] != nil:
		case s.Now.Sub(j.CreationTimestamp.Time) <= workloadGrace:
			young++
		default:
			unseen = append(unseen, j)
		}
	}
	seen := len(labelled) - young - len(unseen)
	switch {
	case len(unseen) > 0:
		return []Result{integrationOff(s, unseen)}
	case seen == 0:
		return []Result{ok(CheckKueueIntegration, fmt.Sprintf("too early to tell whether Kueue's TFJob integration is on: the %d TFJob(s) with a %s label were created less than %v ago", young, queueing.QueueNameLabel, workloadGrace))}
	}
	finding := fmt.Sprintf("Kueue keeps a Workload for each of the %d TFJob(s) with a %s label: its TFJob integration is on", seen, queueing.QueueNameLabel)
	if young > 0 {
		finding += fmt.Sprintf(" (%d created less than %v ago not judged yet)", young, workloadGrace)
	}
	return []Result{ok(CheckKueueIntegration, finding)}
}

// withoutKueue is the WARN for queue-name labels in a cluster without
// Kueue.
func withoutKueue(jobs []*kubeflowv1.TFJob) Result {
	finding := fmt.Sprintf("%d TFJob(s) carry the %s label (%s) but Kueue is not installed (the apiserver serves no kueue.x-k8s.io Workloads): the label does nothing and the jobs run without waiting for any queue",
		len(jobs), queueing.QueueNameLabel, jobsAndQueues(jobs))
	if n := suspendedCount(jobs); n > 0 {
		finding += fmt.Sprintf("; %d of them are suspended and stay so until someone sets spec.runPolicy.suspend to false", n)
	}
	j := jobs[0]
	return Result{Check: CheckKueueIntegration, Status: StatusWarn, Finding: finding,
		Fix: fmt.Sprintf("install Kueue with its TFJob integration on (%q in integrations.frameworks; see docs/queueing.md), or remove the label: kubectl -n %s label tfjob %s %s-",
			queueing.TFJobFramework, j.Namespace, j.Name, queueing.QueueNameLabel)}
}

// integrationOff explains TFJobs with a queue-name label and no Workload,
// with what Kueue's configuration says.
func integrationOff(s *Snapshot, jobs []*kubeflowv1.TFJob) Result {
	oldest := slices.MinFunc(jobs, func(a, b *kubeflowv1.TFJob) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	finding := fmt.Sprintf("Kueue keeps no Workload for %d TFJob(s) with a %s label (%s; the oldest created %s ago), though it makes one within a second when its TFJob integration is on: the integration is off, so Kueue neither suspends nor admits these jobs",
		len(jobs), queueing.QueueNameLabel, jobsAndQueues(jobs), age(s.Now, oldest.CreationTimestamp.Time))
	status := StatusWarn
	if n := suspendedCount(jobs); n > 0 {
		status = StatusFail
		finding += fmt.Sprintf(": %d of them are suspended and never start, the others run outside the queue's quota", n)
	} else {
		finding += ": they run outside the queue's quota"
	}
	configRef := "ConfigMap " + queueing.ConfigNamespace + "/" + queueing.ConfigMapName
	fix := fmt.Sprintf("add %q to integrations.frameworks in Kueue's configuration (kubectl -n %s edit configmap %s, key %s; or the Helm value managerConfig.controllerManagerConfigYaml) and restart Kueue: %s. Kueue then takes these jobs too, suspending the running ones until it admits them; see docs/queueing.md",
		queueing.TFJobFramework, queueing.ConfigNamespace, queueing.ConfigMapName, queueing.ConfigKey, restartKueue)
	switch {
	case s.Kueue.Frameworks == nil:
		finding += " (" + s.Kueue.ConfigNote + ")"
	case slices.Contains(s.Kueue.Frameworks, queueing.TFJobFramework):
		finding += fmt.Sprintf(" (%s lists %s, so Kueue has not been restarted since, or it does not run)", configRef, queueing.TFJobFramework)
		fix = "restart Kueue, which reads its configuration only when it starts: " + restartKueue + "; then check that its pods run: kubectl -n " + queueing.ConfigNamespace + " get pods"
	default:
		finding += fmt.Sprintf(" (%s lists integrations.frameworks %s, not %s)", configRef, strings.Join(s.Kueue.Frameworks, ", "), queueing.TFJobFramework)
	}
	return Result{Check: CheckKueueIntegration, Status: status, Finding: finding, Fix: fix}
}

// jobsAndQueues names at most three jobs, each with its queue.
func jobsAndQueues(jobs []*kubeflowv1.TFJob) string {
	names := make([]string, 0, len(jobs))
	for _, j := range jobs {
		names = append(names, j.Namespace+"/"+j.Name+" in queue "+queueing.QueueName(j))
	}
	return listNames(names)
}

func suspendedCount(jobs []*kubeflowv1.TFJob) int {
	n := 0
	for _, j := range jobs {
		if jobSuspended(j) {
			n++
		}
	}
	return n
}
