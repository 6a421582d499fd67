package nodefs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestGroups(t *testing.T) {
	const uid = "6b8a1d5e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
	cases := map[string]struct {
		driver  Driver
		qos     corev1.PodQOSClass
		wantQOS string
		wantPod string
	}{
		"cgroupfs guaranteed": {Cgroupfs, corev1.PodQOSGuaranteed, "", "pod" + uid},
		"cgroupfs burstable":  {Cgroupfs, corev1.PodQOSBurstable, "burstable", "burstable/pod" + uid},
		"cgroupfs besteffort": {Cgroupfs, corev1.PodQOSBestEffort, "besteffort", "besteffort/pod" + uid},
		"systemd guaranteed": {Systemd, corev1.PodQOSGuaranteed, "",
			"kubepods-pod6b8a1d5e_1c2d_4e5f_8a9b_0c1d2e3f4a5b.slice"},
		"systemd burstable": {Systemd, corev1.PodQOSBurstable, "kubepods-burstable.slice",
			"kubepods-burstable.slice/kubepods-burstable-pod6b8a1d5e_1c2d_4e5f_8a9b_0c1d2e3f4a5b.slice"},
		"systemd besteffort": {Systemd, corev1.PodQOSBestEffort, "kubepods-besteffort.slice",
			"kubepods-besteffort.slice/kubepods-besteffort-pod6b8a1d5e_1c2d_4e5f_8a9b_0c1d2e3f4a5b.slice"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &FS{Driver: tc.driver}
			got := []string{f.QOSGroup(tc.qos), f.PodGroup(tc.qos, uid)}
			if diff := cmp.Diff([]string{tc.wantQOS, tc.wantPod}, got); diff != "" {
				t.Errorf("QOSGroup, PodGroup (-want +got):\n%s", diff)
			}
		})
	}
}

// Groups sit below the kubelet's top cgroup, under Parent, in each controller's hierarchy.
func TestGroupPaths(t *testing.T) {
	cases := map[string]struct {
		fs   FS
		want string
	}{
		"v1 cgroupfs": {FS{Root: "/r", Version: V1, Driver: Cgroupfs}, "/r/cpu/kubepods/besteffort/podU"},
		"v1 systemd, parent": {FS{Root: "/r", Version: V1, Driver: Systemd, Parent: "bench"},
			"/r/cpu/bench/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podU.slice"},
		"v2 cgroupfs, parent": {FS{Root: "/r", Version: V2, Driver: Cgroupfs, Parent: "bench"}, "/r/bench/kubepods/besteffort/podU"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.fs.path(cpuCtl, tc.fs.PodGroup(corev1.PodQOSBestEffort, "U")); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
