package v1

import "strings"

// Default fills in what the CRD schema cannot: replica-type keys in any case
// become their canonical names (ps → PS), as Kubeflow v1's defaulter did. It
// also sets the schema's own defaults, so that objects built in Go (tests,
// the CLI) behave like objects read from the apiserver.
func Default(job *TFJob) {
	specs := job.Spec.TFReplicaSpecs
	for key, spec := range specs {
		canonical := CanonicalReplicaType(key)
		if canonical != key {
			if _, taken := specs[canonical]; !taken {
				delete(specs, key)
				specs[canonical] = spec
			}
		}
	}
	for _, spec := range specs {
		if spec == nil {
			continue
		}
		if spec.Replicas == nil {
			one := int32(1)
			spec.Replicas = &one
		}
		if spec.RestartPolicy == "" {
			spec.RestartPolicy = RestartPolicyNever
		}
	}
}

// CanonicalReplicaType returns the canonical spelling of a replica type
// written in any case, or t itself when it is not a known type.
func CanonicalReplicaType(t ReplicaType) ReplicaType {
	for _, known := range ReplicaTypes {
		if strings.EqualFold(string(t), string(known)) {
			return known
		}
	}
	return t
}
