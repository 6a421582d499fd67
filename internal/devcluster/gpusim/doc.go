// Package gpusim is a SIMULATOR of NVIDIA's dcgm-exporter for the local
// cluster of `backfill dev`, whose nodes are kwok fakes with no hardware.
//
// It is not an exporter: it reads no GPU and talks to no driver. It invents
// one GPU per unit of nvidia.com/gpu that a Node advertises, hands those GPUs
// to the running pods that request them (the way the device plugin would),
// makes up plausible readings, and publishes them under dcgm-exporter's
// metric names and labels (DCGM_FI_DEV_GPU_UTIL{gpu, UUID, device, modelName,
// Hostname, pod, namespace, container} and friends). Dashboards and alerts
// written for a real dcgm-exporter therefore work unchanged against the
// local cluster. A pod's annotations can stage the readings of the GPUs it
// holds (UtilAnnotation, MemoryAnnotation). Every series says what it is:
// the modelName label ends in "(simulated)", the UUIDs are derived from
// node names, and the metrics' help text says "simulated".
//
// Snapshot is the whole model as a pure function of nodes, pods and time;
// Collector and NewServer serve it over HTTP, listing the cluster at every
// scrape through a Lister.
package gpusim
