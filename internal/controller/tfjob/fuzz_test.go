package tfjob

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// fuzzJob derives a TFJob from fuzz inputs. ok is false when the CRD
// would reject the job, so that the fuzzer only explores valid ones.
//
//   - chiefKind: 0 no chief, 1 Chief, 2 Master, with chief replicas;
//   - present: bit 0 PS, bit 1 Worker, bit 2 Evaluator;
//   - port: the workers' tfjob-port, 0 for none (the default 2222);
//   - keyCase: 0 canonical keys, 1 lowercase, 2 uppercase.
func fuzzJob(name string, chiefKind, chief, present, ps, worker, evaluator uint8, port uint16, keyCase uint8, dynamic bool) (*kubeflowv1.TFJob, bool) {
	if len(validation.IsDNS1035Label(name)) > 0 {
		return nil, false
	}
	counts := map[kubeflowv1.ReplicaType]uint8{}
	switch chiefKind {
	case 0:
	case 1:
		counts[Chief] = chief
	case 2:
		counts[Master] = chief
	default:
		return nil, false
	}
	if chiefKind != 0 && chief > 1 {
		return nil, false // Chief/Master replicas must be 0 or 1
	}
	for bit, rtype := range []kubeflowv1.ReplicaType{PS, Worker, Evaluator} {
		if present&(1<<bit) != 0 {
			counts[rtype] = []uint8{ps, worker, evaluator}[bit]
		}
	}
	if len(counts) == 0 || keyCase > 2 {
		return nil, false // tfReplicaSpecs needs one entry
	}
	b := makeJob(name)
	for rtype, n := range counts {
		if n > 50 {
			return nil, false
		}
		// The CRD's length rule: <name>-<type>-<replicas-1> fits in 63.
		if len(name)+len(rtype)+len(strconv.Itoa(int(n)-1))+2 > 63 {
			return nil, false
		}
		key := rtype
		switch keyCase {
		case 1:
			key = kubeflowv1.ReplicaType(strings.ToLower(string(rtype)))
		case 2:
			key = kubeflowv1.ReplicaType(strings.ToUpper(string(rtype)))
		}
		b.replicas(key, int32(n), Never)
		if rtype == Worker && port != 0 {
			b.ports(key, corev1.ContainerPort{Name: kubeflowv1.PortName, ContainerPort: int32(port)})
		}
	}
	if dynamic {
		b.dynamicWorker()
	}
	return b.rawObj(), true
}

// FuzzPodFor builds every pod and service of a valid job and checks their
// names, labels, ports and TF_CONFIG.
func FuzzPodFor(f *testing.F) {
	// name, chiefKind, chief, present, ps, worker, evaluator, port, keyCase, dynamic, domain
	f.Add("mnist", uint8(0), uint8(0), uint8(0b010), uint8(0), uint8(1), uint8(0), uint16(0), uint8(0), false, false)
	f.Add("mnist", uint8(0), uint8(0), uint8(0b011), uint8(2), uint8(4), uint8(0), uint16(0), uint8(0), false, false)
	f.Add("dist", uint8(1), uint8(1), uint8(0b111), uint8(2), uint8(3), uint8(1), uint16(3333), uint8(1), false, true)
	f.Add("legacy", uint8(2), uint8(1), uint8(0b010), uint8(0), uint8(2), uint8(0), uint16(0), uint8(2), false, false)
	f.Add("dyn", uint8(0), uint8(0), uint8(0b011), uint8(1), uint8(5), uint8(0), uint16(2222), uint8(1), true, false)
	f.Add("dyn-chief", uint8(1), uint8(1), uint8(0b111), uint8(1), uint8(2), uint8(1), uint16(0), uint8(0), true, true)
	f.Add("zero", uint8(1), uint8(0), uint8(0b011), uint8(0), uint8(0), uint8(0), uint16(0), uint8(0), false, false)
	f.Add("a"+strings.Repeat("b", 46), uint8(0), uint8(0), uint8(0b010), uint8(0), uint8(50), uint8(0), uint16(65535), uint8(0), false, false)

	f.Fuzz(func(t *testing.T, name string, chiefKind, chief, present, ps, worker, evaluator uint8, port uint16, keyCase uint8, dynamic, withDomain bool) {
		job, ok := fuzzJob(name, chiefKind, chief, present, ps, worker, evaluator, port, keyCase, dynamic)
		if !ok {
			t.Skip("the CRD rejects this job")
		}
		kubeflowv1.Default(job)
		for key := range job.Spec.TFReplicaSpecs {
			if kubeflowv1.CanonicalReplicaType(key) != key {
				t.Fatalf("Default left key %q", key)
			}
		}
		opts := podOptions{}
		if withDomain {
			opts.clusterDomain = "cluster.local"
		}
		portOf := func(rtype kubeflowv1.ReplicaType) int32 {
			if rtype == Worker && port != 0 {
				return int32(port)
			}
			return kubeflowv1.DefaultPort
		}
		addr := func(rtype kubeflowv1.ReplicaType, i int) string {
			host := fmt.Sprintf("%s-%s-%d.%s.svc", job.Name, strings.ToLower(string(rtype)), i, job.Namespace)
			if opts.clusterDomain != "" {
				host += "." + opts.clusterDomain
			}
			return fmt.Sprintf("%s:%d", host, portOf(rtype))
		}
		// The cluster TensorFlow must see: every replica but evaluators.
		wantCluster := map[string][]string{}
		total := 0
		for rtype, spec := range job.Spec.TFReplicaSpecs {
			n := int(*spec.Replicas)
			total += n
			if rtype == Evaluator {
				continue
			}
			for i := 0; i < n; i++ {
				wantCluster[strings.ToLower(string(rtype))] = append(wantCluster[strings.ToLower(string(rtype))], addr(rtype, i))
			}
		}

		for _, id := range allReplicas(job) {
			wantName := fmt.Sprintf("%s-%s-%d", job.Name, strings.ToLower(string(id.rtype)), id.index)
			pod, err := podFor(job, id.rtype, id.index, opts)
			if err != nil {
				t.Fatalf("podFor(%s): %v", wantName, err)
			}
			svc := serviceFor(job, id.rtype, id.index)
			for kind, got := range map[string]string{"pod": pod.Name, "service": svc.Name} {
				if got != wantName {
					t.Errorf("%s name %q, want %q", kind, got, wantName)
				}
				if errs := validation.IsDNS1035Label(got); len(errs) > 0 {
					t.Errorf("%s name %q is not a DNS-1035 label: %v", kind, got, errs)
				}
			}
			if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
				t.Errorf("%s: the service selector %v does not select the pod %v", wantName, svc.Spec.Selector, pod.Labels)
			}
			var tfPorts []int32
			for _, p := range pod.Spec.Containers[0].Ports {
				if p.Name == kubeflowv1.PortName {
					tfPorts = append(tfPorts, p.ContainerPort)
				}
			}
			if diff := cmp.Diff([]int32{portOf(id.rtype)}, tfPorts); diff != "" {
				t.Errorf("%s: tfjob-port of the pod (-want +got):\n%s", wantName, diff)
			}
			var svcPorts []int32
			for _, p := range svc.Spec.Ports {
				svcPorts = append(svcPorts, p.Port)
			}
			if diff := cmp.Diff([]int32{portOf(id.rtype)}, svcPorts); diff != "" {
				t.Errorf("%s: service ports (-want +got):\n%s", wantName, diff)
			}

			var configs []string
			for _, env := range pod.Spec.Containers[0].Env {
				if env.Name == "TF_CONFIG" {
					configs = append(configs, env.Value)
				}
			}
			if total <= 1 {
				if len(configs) != 0 {
					t.Errorf("%s: a job of %d replica(s) got TF_CONFIG %q", wantName, total, configs)
				}
				continue
			}
			if len(configs) != 1 {
				t.Fatalf("%s: %d TF_CONFIG variables, want 1", wantName, len(configs))
			}
			checkTFConfig(t, wantName, configs[0], id, dynamic, wantCluster)
		}
	})
}

// checkTFConfig checks one replica's TF_CONFIG against the cluster it
// must describe.
func checkTFConfig(t *testing.T, pod, config string, id replicaID, dynamic bool, wantCluster map[string][]string) {
	t.Helper()
	wantTask := tfTask{Type: strings.ToLower(string(id.rtype)), Index: id.index}
	if dynamic {
		var got struct {
			Cluster struct {
				Worker map[string]string `json:"worker"`
				PS     []string          `json:"ps"`
			} `json:"cluster"`
			Task tfTask `json:"task"`
		}
		if err := strictDecode(config, &got); err != nil {
			t.Fatalf("%s: sparse TF_CONFIG %s: %v", pod, config, err)
		}
		wantWorker, wantPS := map[string]string{}, []string{}
		switch wantTask.Type {
		case "worker":
			wantWorker[strconv.Itoa(id.index)] = wantCluster["worker"][id.index]
			wantPS = append(wantPS, wantCluster["ps"]...)
		case "ps":
			wantPS = []string{wantCluster["ps"][id.index]}
		}
		if diff := cmp.Diff(wantTask, got.Task); diff != "" {
			t.Errorf("%s: task (-want +got):\n%s", pod, diff)
		}
		if diff := cmp.Diff(wantWorker, got.Cluster.Worker); diff != "" {
			t.Errorf("%s: sparse workers (-want +got):\n%s", pod, diff)
		}
		if diff := cmp.Diff(wantPS, got.Cluster.PS); diff != "" {
			t.Errorf("%s: sparse parameter servers (-want +got):\n%s", pod, diff)
		}
		return
	}
	var got struct {
		Cluster     map[string][]string `json:"cluster"`
		Task        tfTask              `json:"task"`
		Environment *string             `json:"environment"`
	}
	if err := strictDecode(config, &got); err != nil {
		t.Fatalf("%s: TF_CONFIG %s: %v", pod, config, err)
	}
	if got.Environment == nil || *got.Environment != "cloud" {
		t.Errorf("%s: environment is not \"cloud\" in %s", pod, config)
	}
	if diff := cmp.Diff(wantTask, got.Task); diff != "" {
		t.Errorf("%s: task (-want +got):\n%s", pod, diff)
	}
	// A type with zero replicas may be listed empty; it names no replica.
	for k, v := range got.Cluster {
		if len(v) == 0 {
			delete(got.Cluster, k)
		}
	}
	if diff := cmp.Diff(wantCluster, got.Cluster); diff != "" {
		t.Errorf("%s: cluster (-want +got):\n%s", pod, diff)
	}
}

// strictDecode decodes JSON that must have no key beyond v's fields.
func strictDecode(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}
