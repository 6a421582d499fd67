package cgroupsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

const testNode = "cpu-0"

// onlinePod is a running web pod of the node: 2 cores requested, a limit
// of 4, using use cores.
func onlinePod(name, use string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "online", Name: name, UID: types.UID(name + "-uid"),
			Annotations: map[string]string{kwok.UsageCPUAnnotation: use}},
		Spec: corev1.PodSpec{NodeName: testNode, Containers: []corev1.Container{{Name: "web", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
		}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable},
	}
}

// offlinePod is a running training pod on reclaimed capacity asking for
// use cores.
func offlinePod(name, use string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID(name + "-uid"),
			Annotations: map[string]string{kwok.UsageCPUAnnotation: use}},
		Spec: corev1.PodSpec{NodeName: testNode, PriorityClassName: colocation.DefaultOfflinePriorityClass,
			Containers: []corev1.Container{{Name: "tensorflow", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{colocation.ResourceBatchCPU: resource.MustParse("6000")},
			}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBestEffort},
	}
}

// testNodeOf is a simulated node of 16 CPUs whose daemons use 50m, with
// the pods *pods holds.
func testNodeOf(t *testing.T, pods *[]*corev1.Pod) *node {
	t.Helper()
	tr, err := newTree(filepath.Join(t.TempDir(), testNode), 16)
	if err != nil {
		t.Fatal(err)
	}
	return newNode(testNode, tr, 0.05, colocation.DefaultOfflinePriorityClass, func() []*corev1.Pod { return *pods })
}

func TestTheAgentFindsAKubeletsTree(t *testing.T) {
	var pods []*corev1.Pod
	n := testNodeOf(t, &pods)
	fs, err := nodefs.Detect(n.tree.fs.Root, "/", n.tree.fs.ProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	if fs.Version != nodefs.V2 || fs.Driver != nodefs.Systemd {
		t.Errorf("Detected cgroup v%d, driver %s; want v2, systemd", fs.Version, fs.Driver)
	}
	if cpus, err := fs.NodeCPUs(); err != nil || cpus != 16 {
		t.Errorf("NodeCPUs: %d, %v; want 16", cpus, err)
	}
}

func TestPodCgroupsAsTheKubeletMakesThem(t *testing.T) {
	web := onlinePod("web-0", "1")
	train := offlinePod("train-0", "6")
	pods := []*corev1.Pod{web, train}
	n := testNodeOf(t, &pods)
	if err := n.advance(time.Now(), listedAll(pods)); err != nil {
		t.Fatal(err)
	}
	fs := n.tree.fs
	for _, tc := range []struct {
		pod          *corev1.Pod
		dir          string
		quota        int64
		weight, idle string
	}{
		{web, "kubepods-burstable.slice/kubepods-burstable-podweb_0_uid.slice", 400_000, "79", "0"},
		{train, "kubepods-besteffort.slice/kubepods-besteffort-podtrain_0_uid.slice", -1, "1", "0"},
	} {
		group := fs.PodGroup(tc.pod.Status.QOSClass, tc.pod.UID)
		if group != tc.dir {
			t.Errorf("Pod %s's cgroup is %s, want %s", tc.pod.Name, group, tc.dir)
		}
		if q, err := fs.CPUQuota(group); err != nil || q.Quota != tc.quota || q.Period != cfsPeriod {
			t.Errorf("Pod %s's cpu.max: %+v, %v; want quota %d per %d", tc.pod.Name, q, err, tc.quota, cfsPeriod)
		}
		for file, want := range map[string]string{"cpu.weight": tc.weight, "cpu.idle": tc.idle} {
			if got := readTrimmed(t, filepath.Join(n.tree.podDir(group), file)); got != want {
				t.Errorf("Pod %s's %s: %q, want %q", tc.pod.Name, file, got, want)
			}
		}
	}
}

// What the agent reads after a step is what the model says: use, the
// offline pod held to the quota the agent wrote, the rest throttled, the
// online pod's wait, the node's busy time with its daemons.
func TestAdvanceMovesWhatTheAgentReads(t *testing.T) {
	web := onlinePod("web-0", "3500m")
	train := offlinePod("train-0", "14")
	pods := []*corev1.Pod{web, train}
	n := testNodeOf(t, &pods)
	fs := n.tree.fs
	start := time.Now()
	if err := n.advance(start, listedAll(pods)); err != nil {
		t.Fatal(err)
	}
	trainGroup := fs.PodGroup(train.Status.QOSClass, train.UID)
	webGroup := fs.PodGroup(web.Status.QOSClass, web.UID)
	// The agent's ceiling: 10 cores.
	if err := fs.SetPodCPUCeiling(trainGroup, 1_000_000, nodefs.Limits{Pod: -1}); err != nil {
		t.Fatal(err)
	}
	waits := fs.NewWaitMeter()
	if _, err := waits.Read(webGroup); err != nil { // where the meter starts
		t.Fatal(err)
	}
	if err := n.advance(start.Add(10*time.Second), listedAll(pods)); err != nil {
		t.Fatal(err)
	}

	load := (0.05 + 3.5 + 10) / 16
	for what, tc := range map[string]struct {
		read func() (time.Duration, error)
		want time.Duration
	}{
		"the online pod's use":           {func() (time.Duration, error) { return fs.CPUUsage(webGroup) }, 35 * time.Second},
		"the offline pod's use":          {func() (time.Duration, error) { return fs.CPUUsage(trainGroup) }, 100 * time.Second},
		"the offline pod's throttling":   {func() (time.Duration, error) { return fs.CPUThrottled(trainGroup) }, 40 * time.Second},
		"the online pod never throttled": {func() (time.Duration, error) { return fs.CPUThrottled(webGroup) }, 0},
		"the pods' use":                  {func() (time.Duration, error) { return fs.CPUUsage("") }, 135 * time.Second},
		"the node's busy time":           {fs.NodeCPUBusy, 135*time.Second + 500*time.Millisecond},
		"the online pod's wait": {func() (time.Duration, error) { return waits.Read(webGroup) },
			over(Wait(3.5, load), 10*time.Second).Truncate(time.Microsecond)},
	} {
		got, err := tc.read()
		if err != nil {
			t.Errorf("Reading %s: %v", what, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: %v, want %v", what, got, tc.want)
		}
	}
	if got := readTrimmed(t, filepath.Join(n.tree.podDir(trainGroup), "cpu.stat")); !strings.Contains(got, "nr_periods 100\nnr_throttled 100\n") {
		t.Errorf("The offline pod's cpu.stat counts no throttled periods of the 100 it ran with a quota:\n%s", got)
	}
}

// A running pod gets its cgroup once the agent lists it, as the kubelet
// makes it before the pod's containers run, and its use counts from the
// step after: the agent's first reading of it is zero, so none of its use
// passes for online use.
func TestAPodsCgroupWaitsForTheAgentAndCountsFromTheNextStep(t *testing.T) {
	train := offlinePod("train-0", "4")
	pods := []*corev1.Pod{train}
	n := testNodeOf(t, &pods)
	group := n.tree.fs.PodGroup(train.Status.QOSClass, train.UID)
	start := time.Now()
	if err := n.advance(start, nil); err != nil {
		t.Fatal(err)
	}
	if n.tree.fs.Exists(group) {
		t.Errorf("A pod the agent does not list yet has a cgroup")
	}
	for i, want := range []time.Duration{0, 4 * time.Second} {
		if err := n.advance(start.Add(time.Duration(i+1)*time.Second), listedAll(pods)); err != nil {
			t.Fatal(err)
		}
		if got, err := n.tree.fs.CPUUsage(group); err != nil || got != want {
			t.Errorf("The pod's use after listed advance %d: %v, %v; want %v", i+1, got, err, want)
		}
		if got, err := n.tree.fs.CPUUsage(""); err != nil || got != want {
			t.Errorf("The pods' use after listed advance %d: %v, %v; want %v", i+1, got, err, want)
		}
	}
}

func TestAPodGoneTakesItsCgroupButNotThePodsUse(t *testing.T) {
	train := offlinePod("train-0", "4")
	pods := []*corev1.Pod{train}
	n := testNodeOf(t, &pods)
	start := time.Now()
	for i, at := range []time.Duration{0, time.Second} {
		if err := n.advance(start.Add(at), listedAll(pods)); err != nil {
			t.Fatalf("Advance %d: %v", i, err)
		}
	}
	group := n.tree.fs.PodGroup(train.Status.QOSClass, train.UID)
	before, err := n.tree.fs.CPUUsage("")
	if err != nil {
		t.Fatal(err)
	}
	pods = nil
	if err := n.advance(start.Add(2*time.Second), listedAll(pods)); err != nil {
		t.Fatal(err)
	}
	if n.tree.fs.Exists(group) {
		t.Errorf("The cgroup of a pod that no longer runs is still there")
	}
	if after, err := n.tree.fs.CPUUsage(""); err != nil || after != before {
		t.Errorf("The pods' use after one went: %v, %v; want %v, as counters never fall", after, err, before)
	}
}

// listedAll is every pod of pods, as the agent lists them.
func listedAll(pods []*corev1.Pod) map[types.UID]bool {
	listed := map[types.UID]bool{}
	for _, p := range pods {
		listed[p.UID] = true
	}
	return listed
}

func readTrimmed(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
