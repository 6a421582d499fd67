package tfjob

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// The stop notice: before the operator itself stops a running pod (the
// job finished and cleanPodPolicy stops it, or the job was suspended), it
// annotates the pod with why and when, and deletes it only once the notice
// has run out. Deletion then sends SIGTERM and allows the pod's grace
// period. Training code reads the notice in /etc/backfill/annotations (a
// downward-API file kept current by the kubelet) and saves a checkpoint.
// Disruptions by the cluster (preemption, eviction) give no notice: there
// SIGTERM and the grace period are the whole warning.
const (
	// StopReasonAnnotation says why the pod is being stopped, e.g.
	// TFJobSuspended or TFJobSucceeded.
	StopReasonAnnotation = colocation.StopReasonAnnotation
	// StopAtAnnotation is when the pod will get SIGTERM, in RFC 3339.
	StopAtAnnotation = colocation.StopAtAnnotation
	// NoticeDir is where the tensorflow container finds the notice.
	NoticeDir = "/etc/backfill"
	// noticeVolume is the downward-API volume behind NoticeDir.
	noticeVolume = "backfill-notice"
)

// stopNotice is a notice to write on a pod.
type stopNotice struct {
	pod    *corev1.Pod
	reason string
	at     time.Time
}

// stop plans the operator's own stop of a pod: a running pod gets the
// notice first and is deleted once it has run out, or as soon as the job
// reports a checkpoint made after the notice (the handshake); any other
// pod is deleted at once.
func (p *plan) stop(pod *corev1.Pod, reason string, now time.Time, notice time.Duration) {
	if pod.DeletionTimestamp != nil {
		return
	}
	if pod.Status.Phase != corev1.PodRunning || notice <= 0 {
		p.delete(pod)
		return
	}
	at, err := time.Parse(time.RFC3339, pod.Annotations[StopAtAnnotation])
	if err != nil {
		p.notices = append(p.notices, stopNotice{pod: pod, reason: reason, at: now.Add(notice).Truncate(time.Second)})
		p.requeueAt(notice)
		return
	}
	if left := at.Sub(now); left > 0 && !p.checkpointed.After(at.Add(-notice)) {
		p.requeueAt(left)
		return
	}
	p.delete(pod)
}

// withNoticeVolume gives the tensorflow container the pod's annotations at
// NoticeDir/annotations, unless the template already uses that volume name
// or directory.
func withNoticeVolume(spec *corev1.PodSpec, c *corev1.Container) {
	for _, v := range spec.Volumes {
		if v.Name == noticeVolume {
			return
		}
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == NoticeDir {
			return
		}
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{
		Name: noticeVolume,
		VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}}},
		}},
	})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: noticeVolume, MountPath: NoticeDir, ReadOnly: true})
}
