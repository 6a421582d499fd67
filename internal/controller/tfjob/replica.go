package tfjob

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// ReplicaOf says why obj, a pod or service, is not a replica of job, or
// returns nil when it is: when it is what the operator creates for the
// job (podFor, serviceFor), and what Kubeflow v1 created before it.
// Anyone who may create pods in the namespace can write any labels and
// owner references, the job's UID included (it is readable), so the
// controller (which adopts only replicas) and the report endpoint (which
// takes progress only from them) check everything a replica is made of:
//
//   - its controller is the job: kind TFJob of kubeflow.org, the job's
//     name and UID, with blockOwnerDeletion, which the operator always
//     sets; where the apiserver runs the OwnerReferencesPermissionEnforcement
//     admission plugin, setting it takes update on tfjobs/finalizers, which
//     users who may only create pods lack;
//   - the labels name the operator, the job, a replica type of the job and
//     an index within that type's replicas;
//   - its name is the one the operator gives that replica,
//     <job>-<type>-<index>: the apiserver keeps names unique, so while the
//     operator's own pod of a replica exists no other pod can pass.
//
// What it cannot tell without a secret is a pod made so by someone else
// while no pod of that replica exists; the ValidatingAdmissionPolicy the
// chart and kustomize install refuses those (docs/colocation.md, "The
// report channel"). The pod's spec is not checked: it is the template's,
// as readable and copyable as the rest, mutating webhooks change it, and
// the manager's cache does not keep it (SlimPod).
func ReplicaOf(obj metav1.Object, job *kubeflowv1.TFJob) error {
	return replicaOf(obj, job, true)
}

// ownReplica is ReplicaOf but for the bound on the index: the controller
// adopts the replicas a smaller replica count left over, as Kubeflow v1
// does, so that they stop with the job (cleanPodPolicy, suspension)
// rather than run on until it is deleted.
func ownReplica(obj metav1.Object, job *kubeflowv1.TFJob) error {
	return replicaOf(obj, job, false)
}

func replicaOf(obj metav1.Object, job *kubeflowv1.TFJob, bounded bool) error {
	if obj.GetNamespace() != job.Namespace {
		return fmt.Errorf("it is in namespace %s, the job in %s", obj.GetNamespace(), job.Namespace)
	}
	if err := controlledBy(obj, job); err != nil {
		return err
	}
	labels := obj.GetLabels()
	if v := labels[kubeflowv1.OperatorNameLabel]; v != kubeflowv1.OperatorName {
		return fmt.Errorf("label %s is %q, not %q", kubeflowv1.OperatorNameLabel, v, kubeflowv1.OperatorName)
	}
	if v := labels[kubeflowv1.JobNameLabel]; v != job.Name {
		return fmt.Errorf("label %s is %q, not the job's name", kubeflowv1.JobNameLabel, v)
	}
	rtype, replicas, ok := replicaTypeOf(job, labels[kubeflowv1.ReplicaTypeLabel])
	if !ok {
		return fmt.Errorf("label %s is %q, not a replica type of the job", kubeflowv1.ReplicaTypeLabel, labels[kubeflowv1.ReplicaTypeLabel])
	}
	value := labels[kubeflowv1.ReplicaIndexLabel]
	index, err := strconv.Atoi(value)
	if err != nil || strconv.Itoa(index) != value || index < 0 || (bounded && index >= int(replicas)) {
		return fmt.Errorf("label %s is %q, not an index below the job's %d %s replica(s)", kubeflowv1.ReplicaIndexLabel, value, replicas, rtype)
	}
	if want := replicaName(job.Name, rtype, index); obj.GetName() != want {
		return fmt.Errorf("its name is not %s, the name of %s replica %d", want, rtype, index)
	}
	return nil
}

// controlledBy says why the job is not obj's controller, or nil.
func controlledBy(obj metav1.Object, job *kubeflowv1.TFJob) error {
	ref := metav1.GetControllerOfNoCopy(obj)
	switch {
	case ref == nil:
		return errors.New("it has no controller")
	case ref.Kind != kubeflowv1.Kind || groupOf(ref.APIVersion) != kubeflowv1.GroupVersion.Group || ref.Name != job.Name:
		return fmt.Errorf("its controller is %s %s, not TFJob %s", ref.Kind, ref.Name, job.Name)
	case ref.UID != job.UID:
		return fmt.Errorf("its controller is TFJob %s of UID %s, an earlier job of the name, not this one (%s)", ref.Name, ref.UID, job.UID)
	case ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion:
		return errors.New("its controller reference lacks blockOwnerDeletion: true, which the operator sets")
	}
	return nil
}

func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ""
	}
	return gv.Group
}

// replicaTypeOf finds the job's replica type of a replica-type label,
// the lowercase type, and its number of replicas. The job's keys may be
// in any case when it is read from the cache, not yet defaulted.
func replicaTypeOf(job *kubeflowv1.TFJob, label string) (kubeflowv1.ReplicaType, int32, bool) {
	for key, spec := range job.Spec.TFReplicaSpecs {
		rtype := kubeflowv1.CanonicalReplicaType(key)
		if spec != nil && label == strings.ToLower(string(rtype)) {
			return rtype, spec.ReplicaCount(), true
		}
	}
	return "", 0, false
}

// stray reports whether a pod with the job's labels that is not one of
// its replicas is still the job's to release: it names the job's UID as
// its controller and carries the tracking finalizer, as a pod made to
// look like a replica may. Its end is not counted, but the finalizer must
// not keep it once it ended or is being deleted.
func stray(pod *corev1.Pod, job *kubeflowv1.TFJob) bool {
	ref := metav1.GetControllerOfNoCopy(pod)
	ended := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	return ref != nil && ref.UID == job.UID && hasTrackingFinalizer(pod) && (ended || pod.DeletionTimestamp != nil)
}
