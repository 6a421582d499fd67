package nodefs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

const testUID = "6b8a1d5e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"

// layouts are the four ways a node may lay out the kubelet's cgroups.
var layouts = map[string]struct {
	version Version
	driver  Driver
}{
	"v1 cgroupfs": {V1, Cgroupfs},
	"v1 systemd":  {V1, Systemd},
	"v2 cgroupfs": {V2, Cgroupfs},
	"v2 systemd":  {V2, Systemd},
}

// containerDir is how a runtime names a container's cgroup under each driver.
func containerDir(d Driver, id string) string {
	if d == Systemd {
		return "cri-containerd-" + id + ".scope"
	}
	return id
}

// kubeletLimits are a pod of two containers limited to 1 core each, so 2 cores for the pod; "sandbox0" is its
// sandbox, which limits do not name.
var kubeletLimits = Limits{Pod: 200000, Containers: map[string]int64{"app0": 100000, "side0": 100000}}

func TestSetPodCPUCeiling(t *testing.T) {
	cases := map[string]struct {
		before     map[string]int64 // "pod" and container IDs -> quota (µs, -1 none)
		limits     Limits
		ceiling    int64
		want       map[string]int64
		wantWrites []string // the cgroups written, in order
	}{
		"lowering writes the children first": {
			before:     map[string]int64{"pod": 200000, "app0": 100000, "side0": 100000, "sandbox0": -1},
			limits:     kubeletLimits,
			ceiling:    50000,
			want:       map[string]int64{"pod": 50000, "app0": 50000, "side0": 50000, "sandbox0": -1},
			wantWrites: []string{"app0", "side0", "pod"},
		},
		"no ceiling restores the kubelet's values, pod first": {
			before:     map[string]int64{"pod": 50000, "app0": 50000, "side0": 50000, "sandbox0": -1},
			limits:     kubeletLimits,
			ceiling:    -1,
			want:       map[string]int64{"pod": 200000, "app0": 100000, "side0": 100000, "sandbox0": -1},
			wantWrites: []string{"pod", "app0", "side0"},
		},
		"raising the ceiling writes the pod first": {
			before:     map[string]int64{"pod": 50000, "app0": 50000, "side0": 50000},
			limits:     kubeletLimits,
			ceiling:    150000,
			want:       map[string]int64{"pod": 150000, "app0": 100000, "side0": 100000},
			wantWrites: []string{"pod", "app0", "side0"},
		},
		"a ceiling above the containers' limits leaves them alone": {
			before:     map[string]int64{"pod": 200000, "app0": 100000, "side0": 100000},
			limits:     kubeletLimits,
			ceiling:    150000,
			want:       map[string]int64{"pod": 150000, "app0": 100000, "side0": 100000},
			wantWrites: []string{"pod"},
		},
		"one child lowered and one raised around the pod": {
			before:     map[string]int64{"pod": 80000, "app0": 80000, "side0": 30000},
			limits:     kubeletLimits,
			ceiling:    60000,
			want:       map[string]int64{"pod": 60000, "app0": 60000, "side0": 60000},
			wantWrites: []string{"app0", "pod", "side0"},
		},
		"unchanged values are not rewritten": {
			before:  map[string]int64{"pod": 50000, "app0": 50000, "side0": 50000, "sandbox0": -1},
			limits:  kubeletLimits,
			ceiling: 50000,
			want:    map[string]int64{"pod": 50000, "app0": 50000, "side0": 50000, "sandbox0": -1},
		},
		"the kubelet's reset of the pod is undone": {
			before:     map[string]int64{"pod": 200000, "app0": 50000, "side0": 50000},
			limits:     kubeletLimits,
			ceiling:    50000,
			want:       map[string]int64{"pod": 50000, "app0": 50000, "side0": 50000},
			wantWrites: []string{"pod"},
		},
		"a best-effort pod is capped at pod level only": {
			before:     map[string]int64{"pod": -1, "app0": -1, "sandbox0": -1},
			limits:     Limits{Pod: -1, Containers: map[string]int64{"app0": -1}},
			ceiling:    30000,
			want:       map[string]int64{"pod": 30000, "app0": -1, "sandbox0": -1},
			wantWrites: []string{"pod"},
		},
		"a best-effort pod is lifted to no quota": {
			before:     map[string]int64{"pod": 30000, "app0": -1, "sandbox0": -1},
			limits:     Limits{Pod: -1, Containers: map[string]int64{"app0": -1}},
			ceiling:    -1,
			want:       map[string]int64{"pod": -1, "app0": -1, "sandbox0": -1},
			wantWrites: []string{"pod"},
		},
		"a sandbox with a quota follows the pod": {
			before:     map[string]int64{"pod": 200000, "app0": 100000, "side0": 100000, "sandbox0": 200000},
			limits:     kubeletLimits,
			ceiling:    50000,
			want:       map[string]int64{"pod": 50000, "app0": 50000, "side0": 50000, "sandbox0": 50000},
			wantWrites: []string{"app0", "sandbox0", "side0", "pod"},
		},
		"a container limit above the pod's is held to the pod's": {
			before:     map[string]int64{"pod": 100000, "app0": -1},
			limits:     Limits{Pod: 100000, Containers: map[string]int64{"app0": 150000}},
			ceiling:    -1,
			want:       map[string]int64{"pod": 100000, "app0": 100000},
			wantWrites: []string{"app0"},
		},
		"a ceiling below the kernel's minimum is raised to 1000": {
			before:     map[string]int64{"pod": 200000, "app0": 100000},
			limits:     kubeletLimits,
			ceiling:    10,
			want:       map[string]int64{"pod": 1000, "app0": 1000},
			wantWrites: []string{"app0", "pod"},
		},
		"container IDs with the runtime's prefix are found": {
			before:     map[string]int64{"pod": 200000, "app0": 100000},
			limits:     Limits{Pod: 200000, Containers: map[string]int64{"containerd://app0": 100000}},
			ceiling:    50000,
			want:       map[string]int64{"pod": 50000, "app0": 50000},
			wantWrites: []string{"app0", "pod"},
		},
	}
	for layout, l := range layouts {
		for name, tc := range cases {
			t.Run(layout+"/"+name, func(t *testing.T) {
				set := func(f *FS, pod string) error { return f.SetPodCPUCeiling(pod, tc.ceiling, tc.limits) }
				checkQuotaWrites(t, l.version, l.driver, tc.before, set, tc.want, tc.wantWrites)
			})
		}
	}
}

func TestRestorePodCPUQuota(t *testing.T) {
	cases := map[string]struct {
		before     map[string]int64 // "pod" and container IDs -> quota (µs, -1 none)
		limits     Limits
		want       map[string]int64
		wantWrites []string // the cgroups written, in order
	}{
		"a ceiling left behind is lifted, pod first": {
			before:     map[string]int64{"pod": 50000, "app0": 50000, "side0": 50000, "sandbox0": -1},
			limits:     kubeletLimits,
			want:       map[string]int64{"pod": 200000, "app0": 100000, "side0": 100000, "sandbox0": -1},
			wantWrites: []string{"pod", "app0", "side0"},
		},
		"a best-effort pod's quota left behind is lifted to none": {
			before:     map[string]int64{"pod": 30000, "app0": -1, "sandbox0": -1},
			limits:     Limits{Pod: -1, Containers: map[string]int64{"app0": -1}},
			want:       map[string]int64{"pod": -1, "app0": -1, "sandbox0": -1},
			wantWrites: []string{"pod"},
		},
		"quotas above the kubelet's are not lowered": {
			before:     map[string]int64{"pod": -1, "app0": 150000, "side0": 50000},
			limits:     kubeletLimits,
			want:       map[string]int64{"pod": -1, "app0": 150000, "side0": 100000},
			wantWrites: []string{"side0"},
		},
		"a pod at the kubelet's values is not written": {
			before: map[string]int64{"pod": 200000, "app0": 100000, "side0": 100000, "sandbox0": -1},
			limits: kubeletLimits,
			want:   map[string]int64{"pod": 200000, "app0": 100000, "side0": 100000, "sandbox0": -1},
		},
	}
	for layout, l := range layouts {
		for name, tc := range cases {
			t.Run(layout+"/"+name, func(t *testing.T) {
				set := func(f *FS, pod string) error { return f.RestorePodCPUQuota(pod, tc.limits) }
				checkQuotaWrites(t, l.version, l.driver, tc.before, set, tc.want, tc.wantWrites)
			})
		}
	}
}

// checkQuotaWrites makes a pod with the quotas of before ("pod" and container IDs -> µs, -1 none) on a fake node,
// calls set on it, and checks the quotas after, the cgroups written in order, and that a cgroup v1 kernel would
// have taken every write.
func checkQuotaWrites(t *testing.T, v Version, d Driver, before map[string]int64, set func(f *FS, pod string) error,
	want map[string]int64, wantWrites []string) {
	t.Helper()
	f := newFakeNode(t, v, d)
	pod := f.PodGroup(corev1.PodQOSBestEffort, testUID)
	groups := map[string]string{} // "pod" and IDs -> group
	for key, quota := range before {
		groups[key] = pod
		if key != "pod" {
			groups[key] = path.Join(pod, containerDir(d, key))
		}
		addGroup(t, f, groups[key], quota)
	}
	beforeDirs := map[string]int64{}
	names := map[string]string{} // cgroup directory -> key
	for key, group := range groups {
		dir := f.path(cpuCtl, group)
		beforeDirs[dir], names[dir] = before[key], key
	}
	writes := recordWrites(f)

	if err := set(f, pod); err != nil {
		t.Fatal(err)
	}

	got := map[string]int64{}
	for key, group := range groups {
		q, err := f.CPUQuota(group)
		if err != nil {
			t.Fatal(err)
		}
		if q.Period != 100000 {
			t.Errorf("%s: period %d, want the kubelet's 100000 kept", key, q.Period)
		}
		got[key] = q.Quota
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quotas (-want +got):\n%s", diff)
	}
	var gotWrites []string
	for _, w := range *writes {
		gotWrites = append(gotWrites, names[filepath.Dir(w.path)])
	}
	if diff := cmp.Diff(wantWrites, gotWrites); diff != "" {
		t.Errorf("cgroups written, in order (-want +got):\n%s", diff)
	}
	if v := v1Violation(beforeDirs, *writes); v != "" {
		t.Errorf("a cgroup v1 kernel would refuse this order: %s", v)
	}
}

// The checker the order tests rely on must itself catch a wrong order.
func TestV1ViolationCatchesPodFirst(t *testing.T) {
	before := map[string]int64{"/k/pod": 200000, "/k/pod/app": 100000, "/k/pod/idle": -1}
	podFirst := []quotaWritten{{"/k/pod/cpu.cfs_quota_us", "50000"}, {"/k/pod/app/cpu.cfs_quota_us", "50000"}}
	if v := v1Violation(before, podFirst); !strings.Contains(v, "/k/pod/app has 100000 above /k/pod's 50000") {
		t.Errorf("pod lowered before its child: got violation %q", v)
	}
	childFirst := []quotaWritten{podFirst[1], podFirst[0]}
	if v := v1Violation(before, childFirst); v != "" {
		t.Errorf("child lowered before its pod: got violation %q, want none", v)
	}
	v2Raise := []quotaWritten{{"/k/pod/app/cpu.max", "300000 100000"}}
	if v := v1Violation(before, v2Raise); v == "" {
		t.Error("child raised above its pod: got no violation")
	}
}

func TestSetPodCPUCeilingWritesTheKernelsFormat(t *testing.T) {
	cases := map[string]struct {
		version   Version
		file      string
		ceiling   int64
		wantValue string
	}{
		"v1 quota":    {V1, "cpu.cfs_quota_us", 50000, "50000"},
		"v1 no quota": {V1, "cpu.cfs_quota_us", -1, "-1"},
		"v2 quota":    {V2, "cpu.max", 50000, "50000 100000"},
		"v2 no quota": {V2, "cpu.max", -1, "max 100000"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeNode(t, tc.version, Cgroupfs)
			pod := f.PodGroup(corev1.PodQOSBestEffort, testUID)
			addGroup(t, f, pod, 20000)
			if err := f.SetPodCPUCeiling(pod, tc.ceiling, Limits{Pod: -1}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(f.path(cpuCtl, pod), tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.wantValue {
				t.Errorf("%s = %q, want %q", tc.file, got, tc.wantValue)
			}
		})
	}
}

func TestSetPodCPUCeilingMissingFiles(t *testing.T) {
	for layout, l := range layouts {
		t.Run(layout, func(t *testing.T) {
			f := newFakeNode(t, l.version, l.driver)
			pod := f.PodGroup(corev1.PodQOSBestEffort, testUID)

			err := f.SetPodCPUCeiling(pod, 50000, kubeletLimits)
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "the cgroup is gone") {
				t.Errorf("pod cgroup missing: got %v, want a not-exist error saying the cgroup is gone", err)
			}

			addGroup(t, f, pod, 200000)
			app := path.Join(pod, containerDir(l.driver, "app0"))
			addGroup(t, f, app, 100000)
			quotaFile := filepath.Join(f.path(cpuCtl, app), map[Version]string{V1: "cpu.cfs_quota_us", V2: "cpu.max"}[l.version])
			if err := os.Remove(quotaFile); err != nil {
				t.Fatal(err)
			}
			err = f.SetPodCPUCeiling(pod, 50000, kubeletLimits)
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), quotaFile) {
				t.Errorf("container's quota file missing: got %v, want a not-exist error naming %s", err, quotaFile)
			}
		})
	}
}

// Root writes through chmod, so the fake tree cannot refuse a write: an injected write answers as a read-only mount
// and a non-root agent would.
func TestSetPodCPUCeilingRefusedWrites(t *testing.T) {
	cases := map[string]struct {
		errno   syscall.Errno
		wantFix string
	}{
		"read-only mount":   {syscall.EROFS, "mount the host's /sys/fs/cgroup read-write"},
		"not root":          {syscall.EACCES, "run the agent as root (UID 0)"},
		"no capability":     {syscall.EPERM, "run the agent as root (UID 0)"},
		"v1 quota too high": {syscall.EINVAL, "lift the parent's (the QoS group's) quota first"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeNode(t, V1, Cgroupfs)
			pod := f.PodGroup(corev1.PodQOSBestEffort, testUID)
			addGroup(t, f, pod, -1)
			f.write = func(path, _ string) error {
				return &fs.PathError{Op: "open", Path: path, Err: tc.errno}
			}
			err := f.SetPodCPUCeiling(pod, 50000, Limits{Pod: -1})
			if !errors.Is(err, tc.errno) {
				t.Fatalf("got %v, want %v", err, tc.errno)
			}
			for _, want := range []string{pod, "cpu.cfs_quota_us", tc.wantFix} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestFileErrorWithoutAKnownFix(t *testing.T) {
	err := fileError("read", "/x/cpu.stat", &fs.PathError{Op: "open", Path: "/x/cpu.stat", Err: syscall.EIO})
	if got, want := err.Error(), "read /x/cpu.stat: input/output error"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, syscall.EIO) {
		t.Errorf("%v does not wrap EIO", err)
	}
}
