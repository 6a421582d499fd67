package expr

import "fmt"

// GPUs that online pods hold but leave idle: the evidence an online team
// needs to scale down at night and lend the GPUs to training. A GPU is
// idle while dcgm-exporter reads it below GPUIdleUtilPercent; online
// pods are every pod that is not offline (backfill_offline_pod_info), as
// for CPU. The windows are read from a subquery a GPUIdleStep apart, so
// that each step joins with the offline pods of its own time: a training
// pod that ended an hour ago counts as offline while it ran.

// GPUIdleUtilPercent is the utilisation (0-100) below which a GPU counts
// as idle.
const GPUIdleUtilPercent = 10

// GPUIdleStep is the resolution of the idle windows' subqueries, and
// gpuIdleStepsPerHour how many of them make an hour.
const (
	GPUIdleStep         = "5m"
	gpuIdleStepsPerHour = 12
)

// The windows the cockpit's panel and `backfill doctor` judge over: the
// average utilisation of the GPUs held now over the last GPUIdleAvgWindow,
// the hours idle over the last GPUIdleHoursWindow (a day and its night).
const (
	GPUIdleAvgWindow   = "6h"
	GPUIdleHoursWindow = "24h"
)

// podHashChars is the alphabet Kubernetes names generated pods from (a
// ReplicaSet's pod-template-hash and every generated suffix): no vowels,
// no 0, 1 or 3, so that a suffix spells no word.
const podHashChars = "[bcdfghjklmnpqrstvwxz2456789]"

// OnlineGPUUtilByGPU is GPUUtilByGPU for the GPUs of online pods only:
// every pod that is not offline, labelled namespace, pod, gpu and UUID.
// Scraped without honorLabels, a free GPU's pod label names the exporter
// (see gpuByGPU): the exporters' own pods are no online pods.
func OnlineGPUUtilByGPU() string {
	return GPUUtilByGPU() + " unless on (namespace, pod) " + OfflinePods() + " unless on (namespace, pod) " + gpuExporters()
}

// gpuExporters is 1 per pod that is a scrape target of the exporter of
// MetricGPUUtil, labelled namespace and pod (the target's labels, which
// up carries whatever honorLabels says).
func gpuExporters() string {
	return "group by (namespace, pod) (up and on (job, instance) " + MetricGPUUtil + ")"
}

// OnlineGPUAvgUtilByGPUOver is the average utilisation over window of
// every GPU an online pod holds now, labelled namespace, pod, gpu and
// UUID: over the part of the window the pod held it.
func OnlineGPUAvgUtilByGPUOver(window string) string {
	return fmt.Sprintf("avg_over_time((%s)[%s:%s]) and on (namespace, pod, gpu, UUID) (%s)",
		OnlineGPUUtilByGPU(), window, GPUIdleStep, OnlineGPUUtilByGPU())
}

// OnlineGPUIdleHoursByGPUOver is how many hours of window each GPU was
// held by an online pod and idle (below GPUIdleUtilPercent), labelled
// namespace, pod, gpu and UUID, whether or not the pod still runs; GPUs
// never idle have no series.
func OnlineGPUIdleHoursByGPUOver(window string) string {
	return fmt.Sprintf("count_over_time(((%s) < %d)[%s:%s]) / %d",
		OnlineGPUUtilByGPU(), GPUIdleUtilPercent, window, GPUIdleStep, gpuIdleStepsPerHour)
}

// ByWorkload adds to a per-pod expression (labelled namespace and pod) a
// label workload, "namespace/owner", with the owner's name as Kubernetes
// names generated pods: web-7d4b9c8f6-x2x45 (a Deployment's ReplicaSet)
// is web, db-0 (a StatefulSet) db, agent-x2x45 (a DaemonSet, a Job)
// agent, any other pod itself. Prometheus has no owner references; a pod
// named by hand like a generated one is read as its owner would be.
func ByWorkload(byPod string) string {
	owner := byPod
	for _, pattern := range []string{
		"(.+)",                         // any pod: itself
		"(.+)-[0-9]+",                  // a StatefulSet's
		"(.+)-" + podHashChars + "{5}", // a DaemonSet's or a Job's
		"(.+)-" + podHashChars + "{6,10}-" + podHashChars + "{5}", // a Deployment's
	} {
		owner = fmt.Sprintf(`label_replace(%s, "owner", "$1", "pod", %q)`, owner, pattern)
	}
	return fmt.Sprintf(`label_join(%s, "workload", "/", "namespace", "owner")`, owner)
}
