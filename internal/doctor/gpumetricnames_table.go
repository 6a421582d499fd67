package doctor

// gpuMetricRename is a GPU metric name that rules and dashboards copied
// from older guides still query but no exporter emits today, and the
// dcgm-exporter name to query instead. The table below is the one source
// of docs/observability.md's table "GPU metric names" (a test compares
// them).
type gpuMetricRename struct {
	// Old is the name no exporter emits.
	Old string
	// DCGM is dcgm-exporter's name for the same measurement.
	DCGM string
	// Unit is the unit and scale of DCGM's series.
	Unit string
	// Note says what else changes when rewriting a query, e.g. a scale.
	Note string
}

// gpuMetricRenames are the names doctor flags. The dcgm_* names are those
// of dcgm-exporter before 2.0, which named each series after the DCGM
// field in lower case (with a few names of its own, e.g. memory_clock);
// since 2.0 every series is named after its DCGM field, DCGM_FI_….
var gpuMetricRenames = []gpuMetricRename{
	{Old: "nvidia_gpu_utilization", DCGM: "DCGM_FI_DEV_GPU_UTIL", Unit: "percent, 0–100",
		Note: "no mainstream exporter emits this name; guides that used it meant a ratio 0–1 or a percent 0–100, so a threshold written for 0–1 must be multiplied by 100; where dcgm-exporter collects profiling metrics, DCGM_FI_PROF_GR_ENGINE_ACTIVE is a ratio 0–1"},
	{Old: "dcgm_gpu_utilization", DCGM: "DCGM_FI_DEV_GPU_UTIL", Unit: "percent, 0–100", Note: "same scale"},
	{Old: "dcgm_mem_copy_utilization", DCGM: "DCGM_FI_DEV_MEM_COPY_UTIL", Unit: "percent, 0–100", Note: "same scale"},
	{Old: "dcgm_enc_utilization", DCGM: "DCGM_FI_DEV_ENC_UTIL", Unit: "percent, 0–100", Note: "same scale"},
	{Old: "dcgm_dec_utilization", DCGM: "DCGM_FI_DEV_DEC_UTIL", Unit: "percent, 0–100", Note: "same scale"},
	{Old: "dcgm_fb_used", DCGM: "DCGM_FI_DEV_FB_USED", Unit: "MiB",
		Note: "not bytes: multiply by 1048576 to get bytes"},
	{Old: "dcgm_fb_free", DCGM: "DCGM_FI_DEV_FB_FREE", Unit: "MiB",
		Note: "not bytes: multiply by 1048576 to get bytes"},
	{Old: "dcgm_fb_total", DCGM: "DCGM_FI_DEV_FB_TOTAL", Unit: "MiB",
		Note: "not among dcgm-exporter's default counters: add it to the exporter's counters file, or use DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE"},
	{Old: "dcgm_gpu_temp", DCGM: "DCGM_FI_DEV_GPU_TEMP", Unit: "°C", Note: "same scale"},
	{Old: "dcgm_memory_temp", DCGM: "DCGM_FI_DEV_MEMORY_TEMP", Unit: "°C", Note: "same scale"},
	{Old: "dcgm_power_usage", DCGM: "DCGM_FI_DEV_POWER_USAGE", Unit: "W", Note: "same scale"},
	{Old: "dcgm_total_energy_consumption", DCGM: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Unit: "mJ, counter",
		Note: "same scale"},
	{Old: "dcgm_sm_clock", DCGM: "DCGM_FI_DEV_SM_CLOCK", Unit: "MHz", Note: "same scale"},
	{Old: "dcgm_memory_clock", DCGM: "DCGM_FI_DEV_MEM_CLOCK", Unit: "MHz", Note: "MEM, not MEMORY, in the new name"},
	{Old: "dcgm_pcie_replay_counter", DCGM: "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", Unit: "retries, counter", Note: "same scale"},
	{Old: "dcgm_xid_errors", DCGM: "DCGM_FI_DEV_XID_ERRORS", Unit: "the last XID error's code", Note: "same meaning"},
	{Old: "dcgm_fi_prof_gr_engine_active", DCGM: "DCGM_FI_PROF_GR_ENGINE_ACTIVE", Unit: "ratio, 0–1",
		Note: "a profiling metric: dcgm-exporter collects it only where its counters file enables it"},
}

// dcgmLabels says which labels dcgm-exporter puts on its series, which
// differ from those of the old exporter (uuid, pod_name, pod_namespace,
// container_name).
const dcgmLabels = "dcgm-exporter labels each series gpu, UUID, device, modelName and Hostname, and names the pod that holds the GPU in " +
	"pod, namespace and container (exported_pod, exported_namespace and exported_container when Prometheus scrapes it with honorLabels: false), " +
	"where the old exporter had uuid, pod_name, pod_namespace and container_name"

// renameOf is the rename of an old name; ok is false for any other name.
func renameOf(name string) (gpuMetricRename, bool) {
	for _, r := range gpuMetricRenames {
		if r.Old == name {
			return r, true
		}
	}
	return gpuMetricRename{}, false
}
