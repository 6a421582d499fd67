package tfjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func TestReplicaName(t *testing.T) {
	cases := map[string]struct {
		job   string
		rtype kubeflowv1.ReplicaType
		index int
		want  string
	}{
		"chief":     {job: "mnist", rtype: Chief, index: 0, want: "mnist-chief-0"},
		"master":    {job: "mnist", rtype: Master, index: 0, want: "mnist-master-0"},
		"ps":        {job: "mnist", rtype: PS, index: 1, want: "mnist-ps-1"},
		"worker":    {job: "mnist", rtype: Worker, index: 12, want: "mnist-worker-12"},
		"evaluator": {job: "mnist", rtype: Evaluator, index: 0, want: "mnist-evaluator-0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, replicaName(tc.job, tc.rtype, tc.index)); diff != "" {
				t.Errorf("replicaName (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodForWholePod compares a whole pod, so that nothing is added to it
// unnoticed.
func TestPodForWholePod(t *testing.T) {
	job := makeJob("mnist").replicas(Chief, 1, Never).replicas(Worker, 2, OnFailure).obj()
	tmpl := &job.Spec.TFReplicaSpecs[Worker].Template
	tmpl.Labels = map[string]string{"app": "mnist", kubeflowv1.ReplicaIndexLabel: "9"}
	tmpl.Annotations = map[string]string{"note": "kept"}
	tmpl.Spec.Containers = append(tmpl.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox"})
	tmpl.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "EPOCHS", Value: "3"}}
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways // replaced by the replica's policy

	got, err := podFor(job, Worker, 1, podOptions{})
	if err != nil {
		t.Fatalf("podFor: %v", err)
	}
	yes := true
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "mnist-worker-1",
			Namespace: "ns",
			Labels: map[string]string{
				"app":                                 "mnist",
				"training.kubeflow.org/operator-name": "tfjob-controller",
				"training.kubeflow.org/job-name":      "mnist",
				"training.kubeflow.org/replica-type":  "worker",
				"training.kubeflow.org/replica-index": "1",
				"job-name":                            "mnist",
			},
			Annotations: map[string]string{"note": "kept"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: "mnist", UID: "uid-mnist",
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
			Finalizers: []string{"backfill.dev/replica-tracking"},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyOnFailure,
			Volumes: []corev1.Volume{{
				Name: "backfill-notice",
				VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
					Items: []corev1.DownwardAPIVolumeFile{{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}}},
				}},
			}},
			Containers: []corev1.Container{{
				Name:         "tensorflow",
				Image:        testImage,
				VolumeMounts: []corev1.VolumeMount{{Name: "backfill-notice", MountPath: "/etc/backfill", ReadOnly: true}},
				Ports:        []corev1.ContainerPort{{Name: "tfjob-port", ContainerPort: 2222, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{
					{Name: "EPOCHS", Value: "3"},
					{Name: "TF_CONFIG", Value: `{"cluster":{"chief":["mnist-chief-0.ns.svc:2222"],"worker":["mnist-worker-0.ns.svc:2222","mnist-worker-1.ns.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}`},
				},
			}, {
				Name:  "sidecar",
				Image: "busybox",
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}
}

func TestPodForLabels(t *testing.T) {
	base := func(job, rtype string, index string) map[string]string {
		return map[string]string{
			"training.kubeflow.org/operator-name": "tfjob-controller",
			"training.kubeflow.org/job-name":      job,
			"training.kubeflow.org/replica-type":  rtype,
			"training.kubeflow.org/replica-index": index,
			"job-name":                            job,
		}
	}
	withRole := func(l map[string]string) map[string]string {
		l["training.kubeflow.org/job-role"] = "master"
		return l
	}
	withChief := makeJob("j").replicas(Chief, 1, Never).replicas(PS, 1, Never).replicas(Worker, 2, Never).replicas(Evaluator, 1, Never).obj()
	withMaster := makeJob("j").replicas(Master, 1, Never).replicas(Worker, 2, Never).obj()
	noChief := makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).obj()
	cases := map[string]struct {
		job   *kubeflowv1.TFJob
		rtype kubeflowv1.ReplicaType
		index int
		want  map[string]string
	}{
		"the chief is master":                      {job: withChief, rtype: Chief, index: 0, want: withRole(base("j", "chief", "0"))},
		"worker 0 of a job with a chief is not":    {job: withChief, rtype: Worker, index: 0, want: base("j", "worker", "0")},
		"a PS of a job with a chief is not":        {job: withChief, rtype: PS, index: 0, want: base("j", "ps", "0")},
		"the evaluator is not":                     {job: withChief, rtype: Evaluator, index: 0, want: base("j", "evaluator", "0")},
		"the legacy master is master":              {job: withMaster, rtype: Master, index: 0, want: withRole(base("j", "master", "0"))},
		"worker 0 of a job with a master is not":   {job: withMaster, rtype: Worker, index: 0, want: base("j", "worker", "0")},
		"worker 0 of a job without chief is":       {job: noChief, rtype: Worker, index: 0, want: withRole(base("j", "worker", "0"))},
		"worker 1 of a job without chief is not":   {job: noChief, rtype: Worker, index: 1, want: base("j", "worker", "1")},
		"PS 0 of a job without chief is not":       {job: noChief, rtype: PS, index: 0, want: base("j", "ps", "0")},
		"lowercase keys give lowercase type label": {job: makeJob("j").replicas("worker", 2, Never).obj(), rtype: Worker, index: 0, want: withRole(base("j", "worker", "0"))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod, err := podFor(tc.job, tc.rtype, tc.index, podOptions{})
			if err != nil {
				t.Fatalf("podFor: %v", err)
			}
			if diff := cmp.Diff(tc.want, pod.Labels); diff != "" {
				t.Errorf("pod labels (-want +got):\n%s", diff)
			}
			svc := serviceFor(tc.job, tc.rtype, tc.index)
			wantSvc := map[string]string{}
			for k, v := range tc.want {
				if k != kubeflowv1.JobRoleLabel {
					wantSvc[k] = v
				}
			}
			if diff := cmp.Diff(wantSvc, svc.Labels); diff != "" {
				t.Errorf("service labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSvc, svc.Spec.Selector); diff != "" {
				t.Errorf("service selector (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodForRestartPolicy(t *testing.T) {
	cases := map[string]struct {
		policy kubeflowv1.RestartPolicy
		want   corev1.RestartPolicy
	}{
		"ExitCode: the operator decides, the pod never restarts": {policy: ExitCode, want: corev1.RestartPolicyNever},
		"OnFailure":       {policy: OnFailure, want: corev1.RestartPolicyOnFailure},
		"Always":          {policy: Always, want: corev1.RestartPolicyAlways},
		"Never":           {policy: Never, want: corev1.RestartPolicyNever},
		"unset is Never ": {policy: "", want: corev1.RestartPolicyNever},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := makeJob("j").replicas(PS, 1, tc.policy).replicas(Worker, 1, Never).obj()
			job.Spec.TFReplicaSpecs[PS].Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			pod, err := podFor(job, PS, 0, podOptions{})
			if err != nil {
				t.Fatalf("podFor: %v", err)
			}
			if diff := cmp.Diff(tc.want, pod.Spec.RestartPolicy); diff != "" {
				t.Errorf("pod restartPolicy (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodAndServicePorts checks the ports of the tensorflow container and
// of the service of the same replica.
func TestPodAndServicePorts(t *testing.T) {
	tcp := corev1.ProtocolTCP
	cases := map[string]struct {
		ports        []corev1.ContainerPort
		wantPod      []corev1.ContainerPort
		wantServices []corev1.ServicePort
	}{
		"tfjob-port 2222 is added when missing": {
			wantPod:      []corev1.ContainerPort{{Name: "tfjob-port", ContainerPort: 2222, Protocol: tcp}},
			wantServices: []corev1.ServicePort{{Name: "tfjob-port", Port: 2222, TargetPort: intstr.FromInt32(2222), Protocol: tcp}},
		},
		"a tfjob-port with another number is kept": {
			ports:        []corev1.ContainerPort{{Name: "tfjob-port", ContainerPort: 3333}},
			wantPod:      []corev1.ContainerPort{{Name: "tfjob-port", ContainerPort: 3333}},
			wantServices: []corev1.ServicePort{{Name: "tfjob-port", Port: 3333, TargetPort: intstr.FromInt32(3333), Protocol: tcp}},
		},
		"other named ports are kept and exposed, unnamed ones only kept": {
			ports: []corev1.ContainerPort{
				{Name: "metrics", ContainerPort: 8080},
				{ContainerPort: 9000},
			},
			wantPod: []corev1.ContainerPort{
				{Name: "metrics", ContainerPort: 8080},
				{ContainerPort: 9000},
				{Name: "tfjob-port", ContainerPort: 2222, Protocol: tcp},
			},
			wantServices: []corev1.ServicePort{
				{Name: "metrics", Port: 8080, TargetPort: intstr.FromInt32(8080), Protocol: tcp},
				{Name: "tfjob-port", Port: 2222, TargetPort: intstr.FromInt32(2222), Protocol: tcp},
			},
		},
		"a UDP port stays UDP on the service": {
			ports: []corev1.ContainerPort{{Name: "stats", ContainerPort: 8125, Protocol: corev1.ProtocolUDP}},
			wantPod: []corev1.ContainerPort{
				{Name: "stats", ContainerPort: 8125, Protocol: corev1.ProtocolUDP},
				{Name: "tfjob-port", ContainerPort: 2222, Protocol: tcp},
			},
			wantServices: []corev1.ServicePort{
				{Name: "stats", Port: 8125, TargetPort: intstr.FromInt32(8125), Protocol: corev1.ProtocolUDP},
				{Name: "tfjob-port", Port: 2222, TargetPort: intstr.FromInt32(2222), Protocol: tcp},
			},
		},
		"a custom tfjob-port among other ports": {
			ports: []corev1.ContainerPort{
				{Name: "tfjob-port", ContainerPort: 4444, Protocol: tcp},
				{Name: "tensorboard", ContainerPort: 6006, Protocol: tcp},
			},
			wantPod: []corev1.ContainerPort{
				{Name: "tfjob-port", ContainerPort: 4444, Protocol: tcp},
				{Name: "tensorboard", ContainerPort: 6006, Protocol: tcp},
			},
			wantServices: []corev1.ServicePort{
				{Name: "tfjob-port", Port: 4444, TargetPort: intstr.FromInt32(4444), Protocol: tcp},
				{Name: "tensorboard", Port: 6006, TargetPort: intstr.FromInt32(6006), Protocol: tcp},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := makeJob("j").replicas(Worker, 2, Never).ports(Worker, tc.ports...).obj()
			sidecar := corev1.Container{Name: "sidecar", Image: "busybox", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}}
			job.Spec.TFReplicaSpecs[Worker].Template.Spec.Containers = append(job.Spec.TFReplicaSpecs[Worker].Template.Spec.Containers, sidecar)
			pod, err := podFor(job, Worker, 1, podOptions{})
			if err != nil {
				t.Fatalf("podFor: %v", err)
			}
			if diff := cmp.Diff(tc.wantPod, pod.Spec.Containers[0].Ports); diff != "" {
				t.Errorf("tensorflow container ports (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(sidecar, pod.Spec.Containers[1]); diff != "" {
				t.Errorf("sidecar changed (-want +got):\n%s", diff)
			}
			svc := serviceFor(job, Worker, 1)
			if diff := cmp.Diff(tc.wantServices, svc.Spec.Ports); diff != "" {
				t.Errorf("service ports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodForPriorityClass(t *testing.T) {
	cases := map[string]struct {
		template  string
		scheduled *kubeflowv1.SchedulingPolicy
		want      string
	}{
		"schedulingPolicy.priorityClass reaches the pod": {
			scheduled: &kubeflowv1.SchedulingPolicy{PriorityClass: "offline"},
			want:      "offline",
		},
		"it wins over the template's": {
			template:  "high",
			scheduled: &kubeflowv1.SchedulingPolicy{PriorityClass: "offline"},
			want:      "offline",
		},
		"the template's is kept without one": {
			template: "high",
			want:     "high",
		},
		"the template's is kept when schedulingPolicy has none": {
			template:  "high",
			scheduled: &kubeflowv1.SchedulingPolicy{Queue: "q"},
			want:      "high",
		},
		"none at all": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).obj()
			job.Spec.RunPolicy.SchedulingPolicy = tc.scheduled
			for _, spec := range job.Spec.TFReplicaSpecs {
				spec.Template.Spec.PriorityClassName = tc.template
			}
			for _, id := range allReplicas(job) {
				pod, err := podFor(job, id.rtype, id.index, podOptions{})
				if err != nil {
					t.Fatalf("podFor: %v", err)
				}
				if diff := cmp.Diff(tc.want, pod.Spec.PriorityClassName); diff != "" {
					t.Errorf("%s: priorityClassName (-want +got):\n%s", pod.Name, diff)
				}
			}
		})
	}
}

// TestPodForLeavesTheJobAlone builds every pod twice: the template is
// copied, never changed, so TF_CONFIG and the port are not added twice.
func TestPodForLeavesTheJobAlone(t *testing.T) {
	job := makeJob("j").replicas(Chief, 1, ExitCode).replicas(PS, 1, Never).replicas(Worker, 2, OnFailure).priorityClass("offline").obj()
	job.Spec.TFReplicaSpecs[Worker].Template.Labels = map[string]string{"app": "x"}
	before := job.DeepCopy()
	var first []*corev1.Pod
	for round := 0; round < 2; round++ {
		for i, id := range allReplicas(job) {
			pod, err := podFor(job, id.rtype, id.index, podOptions{clusterDomain: "cluster.local"})
			if err != nil {
				t.Fatalf("podFor: %v", err)
			}
			if round == 0 {
				first = append(first, pod)
				continue
			}
			if diff := cmp.Diff(first[i], pod); diff != "" {
				t.Errorf("%s: second build differs (-first +second):\n%s", pod.Name, diff)
			}
		}
	}
	if diff := cmp.Diff(before, job); diff != "" {
		t.Errorf("podFor changed the job (-before +after):\n%s", diff)
	}
}

// TestServiceForWholeService compares a whole service.
func TestServiceForWholeService(t *testing.T) {
	job := makeJob("mnist").replicas(Chief, 1, Never).replicas(Worker, 2, Never).
		ports(Chief, corev1.ContainerPort{Name: "tfjob-port", ContainerPort: 3333}).obj()
	yes := true
	labels := map[string]string{
		"training.kubeflow.org/operator-name": "tfjob-controller",
		"training.kubeflow.org/job-name":      "mnist",
		"training.kubeflow.org/replica-type":  "chief",
		"training.kubeflow.org/replica-index": "0",
		"job-name":                            "mnist",
	}
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "mnist-chief-0",
			Namespace: "ns",
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: "mnist", UID: "uid-mnist",
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                "None",
			Selector:                 labels,
			Ports:                    []corev1.ServicePort{{Name: "tfjob-port", Port: 3333, TargetPort: intstr.FromInt32(3333), Protocol: corev1.ProtocolTCP}},
			PublishNotReadyAddresses: true,
		},
	}
	if diff := cmp.Diff(want, serviceFor(job, Chief, 0)); diff != "" {
		t.Errorf("service (-want +got):\n%s", diff)
	}
}

// TestMasterRoleWithoutRunningChief: a Chief with zero replicas leads no
// one, so worker 0 carries job-role=master.
func TestMasterRoleWithoutRunningChief(t *testing.T) {
	job := makeJob("j").replicas(Chief, 0, Never).replicas(Worker, 2, Never).obj()
	pod, err := podFor(job, Worker, 0, podOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Labels[kubeflowv1.JobRoleLabel]; got != kubeflowv1.JobRoleMaster {
		t.Errorf("worker-0 job-role = %q, want master", got)
	}
}
