// Package expr holds the PromQL fragments that backfill's alert rules and
// dashboards share, so that "online", "offline" and "GPU of a pod" mean the
// same thing everywhere.
//
// Online and offline are the manager's definition (internal/colocation,
// Tier): backfill_offline_pod_info has one series per offline pod on a node,
// and every other pod is online. Usage comes from the kubelet's
// per-container series (container!=""), GPU utilisation from dcgm-exporter,
// whichever way its pod labels arrive: as pod/namespace (honorLabels: true)
// or as exported_pod/exported_namespace (honorLabels: false, the default of
// kube-prometheus-stack and of backfill dev).
package expr

import "fmt"

// Metric names from outside backfill that the fragments read.
const (
	// MetricGPUUtil is dcgm-exporter's GPU utilisation, 0-100.
	MetricGPUUtil = "DCGM_FI_DEV_GPU_UTIL"
	// MetricGPUMemoryUsed and MetricGPUMemoryFree are dcgm-exporter's
	// framebuffer memory used and free, in MiB; the two add up to the
	// GPU's memory less what the driver reserves.
	MetricGPUMemoryUsed = "DCGM_FI_DEV_FB_USED"
	MetricGPUMemoryFree = "DCGM_FI_DEV_FB_FREE"
	// MetricCPUUsage is the kubelet's cumulative CPU time per container.
	MetricCPUUsage = "container_cpu_usage_seconds_total"
	// MetricMemoryWorkingSet is the kubelet's working set per container.
	MetricMemoryWorkingSet = "container_memory_working_set_bytes"
	// MetricOfflinePodInfo is the manager's offline pod join series.
	MetricOfflinePodInfo = "backfill_offline_pod_info"
	// MetricGoodput is the manager's per-TFJob goodput account, in
	// seconds by cause.
	MetricGoodput = "backfill_tfjob_goodput_seconds"
)

// MiB is the bytes of a mebibyte, dcgm-exporter's unit of GPU memory.
const MiB = 1 << 20

// DefaultRateWindow is the rate window of the fragments without an explicit
// one: several scrapes even at a 1m scrape interval.
const DefaultRateWindow = "5m"

// ContainerSelector keeps the per-container usage series: the kubelet also
// publishes pod-level (container="") and, under cAdvisor, pause-container
// (container="POD") series, which would count a pod twice.
const ContainerSelector = `container!="",container!="POD"`

// OfflinePods is 1 per offline pod, labelled namespace, pod and node, once
// even if two manager replicas were scraped during a leader change.
func OfflinePods() string {
	return "group by (namespace, pod, node) (" + MetricOfflinePodInfo + ")"
}

// NodesWithOfflineWork is 1 per node running at least one offline pod,
// labelled node.
func NodesWithOfflineWork() string {
	return "group by (node) (" + MetricOfflinePodInfo + ")"
}

// gpuByGPU is one of dcgm-exporter's per-GPU gauges for every GPU
// assigned to a pod, labelled namespace, pod, gpu and UUID whichever
// labelling the exporter's scrape uses. Free GPUs have no exported_pod;
// under honorLabels: false their pod label names the exporter itself,
// which no join with backfill_offline_pod_info keeps.
func gpuByGPU(metric string) string {
	exported := fmt.Sprintf(
		`label_replace(label_replace(%s{exported_pod!=""}, "pod", "$1", "exported_pod", "(.+)"), "namespace", "$1", "exported_namespace", "(.+)")`,
		metric)
	honoured := metric + `{exported_pod="",pod!=""}`
	return "max by (namespace, pod, gpu, UUID) (" + exported + " or " + honoured + ")"
}

// offlineGPU keeps the series of a per-GPU expression (labelled namespace,
// pod, gpu, UUID) whose pod is offline, with the labels of
// backfill_offline_pod_info added: node, tfjob and replica_type.
func offlineGPU(byGPU string) string {
	return byGPU + " * on (namespace, pod) group_left (node, tfjob, replica_type) " +
		"max by (namespace, pod, node, tfjob, replica_type) (" + MetricOfflinePodInfo + ")"
}

// GPUUtilByGPU is dcgm-exporter's utilisation (0-100) of every GPU assigned
// to a pod, labelled namespace, pod, gpu and UUID (see gpuByGPU).
func GPUUtilByGPU() string { return gpuByGPU(MetricGPUUtil) }

// OfflineGPUUtilByGPU is GPUUtilByGPU for the GPUs of offline pods only,
// with the labels of backfill_offline_pod_info added: node, tfjob and
// replica_type.
func OfflineGPUUtilByGPU() string { return offlineGPU(GPUUtilByGPU()) }

// GPUMemoryUsedByGPU is the framebuffer memory in MiB used on every GPU
// assigned to a pod, labelled namespace, pod, gpu and UUID.
func GPUMemoryUsedByGPU() string { return gpuByGPU(MetricGPUMemoryUsed) }

// GPUMemoryFullByGPU is the share of every pod's GPU's memory in use, 0 to
// 1: used / (used + free). Used alone says nothing of a card's size, and
// total is not among the gauges every dcgm-exporter publishes; used and
// free of the same scrape add up to it, less what the driver reserves.
func GPUMemoryFullByGPU() string {
	used := GPUMemoryUsedByGPU()
	return used + " / (" + used + " + " + gpuByGPU(MetricGPUMemoryFree) + ")"
}

// OfflineGPUMemoryUsedByGPU is GPUMemoryUsedByGPU for offline pods only,
// with node, tfjob and replica_type.
func OfflineGPUMemoryUsedByGPU() string { return offlineGPU(GPUMemoryUsedByGPU()) }

// OfflineGPUMemoryFullByGPU is GPUMemoryFullByGPU for offline pods only,
// with node, tfjob and replica_type.
func OfflineGPUMemoryFullByGPU() string { return offlineGPU("(" + GPUMemoryFullByGPU() + ")") }

// GoodputByCause is each TFJob's goodput account in seconds, labelled
// namespace, tfjob and cause, of the series matchers select (e.g.
// `cause="productive"`; empty for all). The max keeps one series per job
// and cause while two manager replicas are scraped during a leader change,
// and drops the target's labels.
func GoodputByCause(matchers string) string {
	selector := MetricGoodput
	if matchers != "" {
		selector += "{" + matchers + "}"
	}
	return "max by (namespace, tfjob, cause) (" + selector + ")"
}

// cpuByPod is each pod's CPU use in cores over window, labelled node,
// namespace and pod.
func cpuByPod(window string) string {
	return fmt.Sprintf("sum by (node, namespace, pod) (rate(%s{%s}[%s]))", MetricCPUUsage, ContainerSelector, window)
}

// memoryByPod is each pod's working set in bytes, labelled node, namespace
// and pod.
func memoryByPod() string {
	return fmt.Sprintf("sum by (node, namespace, pod) (%s{%s})", MetricMemoryWorkingSet, ContainerSelector)
}

// offlineOnly keeps the series of byPod whose pod is offline.
func offlineOnly(byPod string) string {
	return "sum by (node) (" + byPod + " and on (namespace, pod) " + OfflinePods() + ")"
}

// onlineOnly keeps the series of byPod whose pod is not offline.
func onlineOnly(byPod string) string {
	return "sum by (node) (" + byPod + " unless on (namespace, pod) " + OfflinePods() + ")"
}

// OfflineCPUUsedByNode is the CPU in cores that offline pods use on each
// node, labelled node, over DefaultRateWindow.
func OfflineCPUUsedByNode() string { return OfflineCPUUsedByNodeOver(DefaultRateWindow) }

// OfflineCPUUsedByNodeOver is OfflineCPUUsedByNode over a rate window of
// the caller's, e.g. Grafana's $__rate_interval.
func OfflineCPUUsedByNodeOver(window string) string { return offlineOnly(cpuByPod(window)) }

// OnlineCPUUsedByNode is the CPU in cores that online pods (every pod not
// offline) use on each node, labelled node, over DefaultRateWindow.
func OnlineCPUUsedByNode() string { return OnlineCPUUsedByNodeOver(DefaultRateWindow) }

// OnlineCPUUsedByNodeOver is OnlineCPUUsedByNode over a rate window of the
// caller's.
func OnlineCPUUsedByNodeOver(window string) string { return onlineOnly(cpuByPod(window)) }

// CPUUsedByNodeOver is the CPU in cores that every pod on each node uses,
// online and offline together, labelled node, over a rate window of the
// caller's. It equals OnlineCPUUsedByNodeOver plus OfflineCPUUsedByNodeOver
// (the two split the same pods) but needs no join, so it has data whether
// or not offline pods run, and whatever labels the manager's series carry.
func CPUUsedByNodeOver(window string) string { return "sum by (node) (" + cpuByPod(window) + ")" }

// MemoryUsedByNode is the working set in bytes of every pod on each node,
// online and offline together, labelled node: OnlineMemoryUsedByNode plus
// OfflineMemoryUsedByNode, without the join.
func MemoryUsedByNode() string { return "sum by (node) (" + memoryByPod() + ")" }

// OfflineMemoryUsedByNode is the working set in bytes of offline pods on
// each node, labelled node.
func OfflineMemoryUsedByNode() string { return offlineOnly(memoryByPod()) }

// OnlineMemoryUsedByNode is the working set in bytes of online pods on each
// node, labelled node.
func OnlineMemoryUsedByNode() string { return onlineOnly(memoryByPod()) }
