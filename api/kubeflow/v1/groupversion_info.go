package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the TFJob API.
	GroupVersion = schema.GroupVersion{Group: "kubeflow.org", Version: "v1"}

	// SchemeBuilder registers the TFJob types with a runtime scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the TFJob types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind is the kind of the TFJob resource.
const Kind = "TFJob"

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &TFJob{}, &TFJobList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
