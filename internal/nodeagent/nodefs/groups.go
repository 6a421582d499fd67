package nodefs

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Groups are paths relative to the kubelet's top cgroup (Parent/kubepods or Parent/kubepods.slice); "" is that top.

// QOSGroup is the cgroup of a QoS class: "" for Guaranteed (its pods sit at the top); cgroupfs "burstable",
// "besteffort"; systemd "kubepods-burstable.slice", "kubepods-besteffort.slice".
func (f *FS) QOSGroup(qos corev1.PodQOSClass) string {
	tier := qosTier(qos)
	if tier == "" {
		return ""
	}
	if f.Driver == Systemd {
		return "kubepods-" + tier + ".slice"
	}
	return tier
}

// PodGroup is a pod's cgroup: cgroupfs "burstable/pod<uid>", or "pod<uid>" for Guaranteed; systemd
// "kubepods-besteffort.slice/kubepods-besteffort-pod<uid>.slice", or "kubepods-pod<uid>.slice" for Guaranteed, where
// the UID's '-' are written '_' (systemd reads '-' in a slice name as a level of nesting).
func (f *FS) PodGroup(qos corev1.PodQOSClass, uid types.UID) string {
	if f.Driver != Systemd {
		return path.Join(f.QOSGroup(qos), "pod"+string(uid))
	}
	prefix := "kubepods-"
	if tier := qosTier(qos); tier != "" {
		prefix += tier + "-"
	}
	slice := prefix + "pod" + strings.ReplaceAll(string(uid), "-", "_") + ".slice"
	return path.Join(f.QOSGroup(qos), slice)
}

// qosTier is the kubelet's name of a QoS class's cgroup level, "" for Guaranteed (and unknown classes, which the
// kubelet also places at the top).
func qosTier(qos corev1.PodQOSClass) string {
	switch qos {
	case corev1.PodQOSBurstable:
		return "burstable"
	case corev1.PodQOSBestEffort:
		return "besteffort"
	}
	return ""
}
