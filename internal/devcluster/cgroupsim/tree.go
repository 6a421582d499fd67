package cgroupsim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// The simulated kernel's constants.
const (
	// cfsPeriod is the CFS period of every cgroup, in µs: the kubelet's.
	cfsPeriod = 100_000
	// userHZ is the unit of /proc/stat's times, per second.
	userHZ = 100
	// kubepods is the kubelet's top cgroup under the systemd driver.
	kubepods = "kubepods.slice"
)

// tree is one node's simulated cgroup v2 hierarchy and /proc, under dir:
// dir/cgroup and dir/proc. It writes only what the simulated kernel
// changes; the agent writes cpu.max and cpu.idle.
type tree struct {
	dir  string
	cpus int
	fs   *nodefs.FS
}

// newTree lays out a node of cpus CPUs in dir, emptied first: the root
// with cgroup.controllers, kubepods.slice and its QoS slices, and /proc/stat
// with every counter at zero.
func newTree(dir string, cpus int) (*tree, error) {
	if cpus < 1 {
		return nil, fmt.Errorf("a node of %d CPUs: it needs at least one", cpus)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	t := &tree{dir: dir, cpus: cpus, fs: &nodefs.FS{Root: filepath.Join(dir, "cgroup"), Version: nodefs.V2, Driver: nodefs.Systemd,
		ProcRoot: filepath.Join(dir, "proc")}}
	files := map[string]string{"cgroup.controllers": "cpuset cpu io memory pids\n"}
	for _, group := range []string{"", t.fs.QOSGroup(corev1.PodQOSBurstable), t.fs.QOSGroup(corev1.PodQOSBestEffort)} {
		prefix := filepath.Join(kubepods, group) + "/"
		files[prefix+"cpu.max"] = quotaFile(-1)
		files[prefix+"cpu.weight"] = "100\n"
		files[prefix+"cpu.stat"] = statFile(0, 0, 0, 0)
		files[prefix+"cpu.pressure"] = pressureFile(0, [3]float64{})
	}
	for name, content := range files {
		if err := writeFile(filepath.Join(t.fs.Root, name), content); err != nil {
			return nil, err
		}
	}
	if err := t.writeProcStat(0, 0); err != nil {
		return nil, err
	}
	return t, nil
}

// podDir is the directory of a pod's cgroup.
func (t *tree) podDir(group string) string {
	return filepath.Join(t.fs.Root, kubepods, group)
}

// addPod makes a pod's cgroup as the kubelet does: its quota the sum of
// its containers' CPU limits when each has one, its weight from its CPU
// requests, the normal scheduling class, its counters at zero. Containers
// get no cgroups of their own: the pod's is all the agent sets and reads.
func (t *tree) addPod(group string, pod *corev1.Pod) error {
	quota, weight := kubeletCPU(pod)
	for name, content := range map[string]string{
		"cpu.max": quotaFile(quota), "cpu.weight": strconv.FormatInt(weight, 10) + "\n", "cpu.idle": "0\n",
		"cpu.stat": statFile(0, 0, 0, 0), "cpu.pressure": pressureFile(0, [3]float64{}),
	} {
		if err := writeFile(filepath.Join(t.podDir(group), name), content); err != nil {
			return err
		}
	}
	return nil
}

// removePod takes a pod's cgroup away, as the kubelet does once it ends.
func (t *tree) removePod(group string) error { return os.RemoveAll(t.podDir(group)) }

// quota is the CPU a cgroup's cpu.max allows, in cores; negative for none.
func (t *tree) quota(group string) (float64, error) {
	q, err := t.fs.CPUQuota(group)
	if err != nil {
		return 0, err
	}
	if q.Quota < 0 || q.Period <= 0 {
		return -1, nil
	}
	return float64(q.Quota) / float64(q.Period), nil
}

// idle reports whether a cgroup's cpu.idle is 1.
func (t *tree) idle(group string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(t.podDir(group), "cpu.idle"))
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(b)) == "1", nil
}

// counters are a cgroup's cumulative CPU counters.
type counters struct {
	usage, throttled, waited time.Duration
	// periods and throttledPeriods count CFS periods, in fractions until
	// written.
	periods, throttledPeriods float64
	// pressure are the "some" averages over 10 s, 60 s and 300 s, in
	// percent.
	pressure [3]float64
}

// writeCounters writes a cgroup's cpu.stat and cpu.pressure.
func (t *tree) writeCounters(group string, c *counters) error {
	dir := t.podDir(group)
	if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte(statFile(c.usage, c.throttled, c.periods, c.throttledPeriods)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "cpu.pressure"), []byte(pressureFile(c.waited, c.pressure)), 0o644)
}

// writeProcStat writes /proc/stat: the node's CPU time busy and idle since
// boot, split evenly over its CPUs.
func (t *tree) writeProcStat(busy, idle time.Duration) error {
	ticks := func(d time.Duration) int64 { return int64(d / (time.Second / userHZ)) }
	var b strings.Builder
	// user nice system idle iowait irq softirq steal guest guest_nice
	fmt.Fprintf(&b, "cpu  %d 0 0 %d 0 0 0 0 0 0\n", ticks(busy), ticks(idle))
	for i := range t.cpus {
		fmt.Fprintf(&b, "cpu%d %d 0 0 %d 0 0 0 0 0 0\n", i, ticks(busy)/int64(t.cpus), ticks(idle)/int64(t.cpus))
	}
	return writeFile(filepath.Join(t.fs.ProcRoot, "stat"), b.String())
}

// kubeletCPU is the quota (µs per cfsPeriod, -1 none) and weight the
// kubelet gives a pod's cgroup: the sum of its containers' CPU limits if
// each has one, and its CPU request as cpu.shares turned into cpu.weight.
func kubeletCPU(pod *corev1.Pod) (quota, weight int64) {
	var limit, request int64
	every := len(pod.Spec.Containers) > 0
	for _, c := range pod.Spec.Containers {
		request += c.Resources.Requests.Cpu().MilliValue()
		l, ok := c.Resources.Limits[corev1.ResourceCPU]
		every = every && ok && !l.IsZero()
		limit += l.MilliValue()
	}
	quota = -1
	if every {
		quota = limit * cfsPeriod / 1000
	}
	shares := max(request*1024/1000, 2)
	return quota, 1 + (shares-2)*9999/262142
}

func quotaFile(quota int64) string {
	if quota < 0 {
		return fmt.Sprintf("max %d\n", cfsPeriod)
	}
	return fmt.Sprintf("%d %d\n", quota, cfsPeriod)
}

// statFile is a cpu.stat: a tenth of the use is the kernel's.
func statFile(usage, throttled time.Duration, periods, throttledPeriods float64) string {
	us := usage.Microseconds()
	return fmt.Sprintf("usage_usec %d\nuser_usec %d\nsystem_usec %d\nnr_periods %d\nnr_throttled %d\nthrottled_usec %d\nnr_bursts 0\nburst_usec 0\n",
		us, us-us/10, us/10, int64(periods), int64(throttledPeriods), throttled.Microseconds())
}

// pressureFile is a cpu.pressure; only "some" is simulated.
func pressureFile(waited time.Duration, avg [3]float64) string {
	return fmt.Sprintf("some avg10=%.2f avg60=%.2f avg300=%.2f total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		avg[0], avg[1], avg[2], waited.Microseconds())
}

// pressureWindows are the windows of cpu.pressure's averages.
var pressureWindows = [3]time.Duration{10 * time.Second, time.Minute, 5 * time.Minute}

// decay moves the pressure averages toward a wait of perSecond seconds per
// second over dt, as the kernel's running averages do.
func (c *counters) decay(perSecond float64, dt time.Duration) {
	for i, w := range pressureWindows {
		keep := math.Exp(-dt.Seconds() / w.Seconds())
		c.pressure[i] = c.pressure[i]*keep + 100*perSecond*(1-keep)
	}
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
