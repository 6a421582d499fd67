package tfjob

import (
	"fmt"
	"net/url"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// The report channel, from training code to the manager: every tensorflow
// container learns where to POST its progress and gets a ServiceAccount
// token bound to its pod, for the manager's audience only, to do it with.
const (
	// ReportURLEnv is the URL to POST the job's progress to.
	ReportURLEnv = "BACKFILL_REPORT_URL"
	// ReportCAEnv is the PEM of the CA that signs the manager's report
	// endpoint, to verify it with.
	ReportCAEnv = "BACKFILL_REPORT_CA"
	// ReportTokenDir holds the token, in the file "token".
	ReportTokenDir = "/var/run/secrets/backfill.dev"
	// ReportAudience is the token's audience: it is good for nothing but
	// reporting to the manager.
	ReportAudience = "backfill.dev"
	// reportTokenVolume is the projected volume behind ReportTokenDir.
	reportTokenVolume = "backfill-report-token"
	// reportTokenSeconds is the token's life; the kubelet renews it.
	reportTokenSeconds = 3600
)

// ReportAccess is what training code needs to report to the manager.
type ReportAccess struct {
	// BaseURL is where the manager serves reports, e.g.
	// https://backfill-reports.backfill-system.svc:9443.
	BaseURL string
	// CA is the PEM of the CA of its serving certificate.
	CA []byte
}

// ReportPath is the path a job's progress is POSTed to.
func ReportPath(namespace, job string) string {
	return fmt.Sprintf("/v1/namespaces/%s/tfjobs/%s/progress", url.PathEscape(namespace), url.PathEscape(job))
}

// withReportAccess gives the tensorflow container the report URL, the CA
// and the pod-bound token, unless the template already uses the volume
// name or directory.
func withReportAccess(job *kubeflowv1.TFJob, spec *corev1.PodSpec, c *corev1.Container, access *ReportAccess) {
	if access == nil {
		return
	}
	for _, v := range spec.Volumes {
		if v.Name == reportTokenVolume {
			return
		}
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == ReportTokenDir {
			return
		}
	}
	seconds := int64(reportTokenSeconds)
	spec.Volumes = append(spec.Volumes, corev1.Volume{
		Name: reportTokenVolume,
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
			ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: ReportAudience, ExpirationSeconds: &seconds, Path: "token"},
		}}}},
	})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: reportTokenVolume, MountPath: ReportTokenDir, ReadOnly: true})
	c.Env = append(c.Env,
		corev1.EnvVar{Name: ReportURLEnv, Value: access.BaseURL + ReportPath(job.Namespace, job.Name)},
		corev1.EnvVar{Name: ReportCAEnv, Value: string(access.CA)})
}
