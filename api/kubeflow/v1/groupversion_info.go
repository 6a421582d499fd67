package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the TFJob API.
	GroupVersion = schema.GroupVersion{Group: "kubeflow.org", Version: "v1"}

	// SchemeBuilder registers the TFJob types with a runtime scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the TFJob types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind is the kind of the TFJob resource.
const Kind = "TFJob"

func init() {
	SchemeBuilder.Register(&TFJob{}, &TFJobList{})
}
