package v1

// ReplicaCount is the number of replicas the spec asks for: Kubeflow v1
// reads an unset count as 1 (the schema defaults it so), and a missing
// spec asks for none.
func (s *ReplicaSpec) ReplicaCount() int32 {
	if s == nil {
		return 0
	}
	if s.Replicas == nil {
		return 1
	}
	return *s.Replicas
}

// TotalReplicas is the number of pods the job asks for, of every type.
func (j *TFJob) TotalReplicas() int32 {
	var n int32
	for _, spec := range j.Spec.TFReplicaSpecs {
		n += spec.ReplicaCount()
	}
	return n
}
