package manager

// The manager's cluster-wide permissions: exactly what it reads and writes,
// and no secrets. `make generate` turns these markers into
// config/rbac/role.yaml, which the kustomize install uses and the Helm
// chart must match (test/integration/install checks both). The
// leader-election Lease is namespaced and lives in a Role of its own.
//
// TFJobs: read, delete after ttlSecondsAfterFinished, write status, label
// as retired (as are the pods and services a retired job keeps). The
// finalizers subresource lets the operator set blockOwnerDeletion on the
// pods, services and PodGroups it owns where the apiserver enforces owner
// permissions.
// +kubebuilder:rbac:groups=kubeflow.org,resources=tfjobs,verbs=get;list;watch;delete;patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=tfjobs/status,verbs=update
// +kubebuilder:rbac:groups=kubeflow.org,resources=tfjobs/finalizers,verbs=update
//
// Replica pods: created, deleted, patched (tracking finalizer, stop
// notices, retired); every pod is read for the co-location state metrics.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;delete;patch
//
// Reclaimed capacity: every node's batch resources are written to its
// status and explained in an annotation; offline pods are evicted through
// the Eviction API (never deleted outright), so PodDisruptionBudgets hold.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
//
// A reclaimed pod's cpu and memory requests and limits are shaped so that
// the namespace's LimitRanges admit it (colocation.ContainerRulesOf).
// +kubebuilder:rbac:groups="",resources=limitranges,verbs=get;list;watch
// A ResourceQuota that frees room wakes the jobs whose pods it refused.
// +kubebuilder:rbac:groups="",resources=resourcequotas,verbs=get;list;watch
//
// Usage for reclaimed capacity with --reclaim-usage-source=metrics-api.
// +kubebuilder:rbac:groups=metrics.k8s.io,resources=nodes;pods,verbs=get;list
//
// Events: the controller writes events.k8s.io events, leader election the
// core ones.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// The offline PriorityClass is created at start unless it exists; jobs
// wait for the classes they name.
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch;create
//
// Gangs: the PodGroup of whichever gang scheduler the cluster serves,
// labelled as retired with its finished job.
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=podgroups,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=podgroups,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=scheduling.x-k8s.io,resources=podgroups,verbs=get;list;watch;create;patch
//
// GPU loans (--gpu-loans): the online GPU workloads and their KEDA
// ScaledObjects are read (KEDA through the dynamic client, so it is no
// dependency); a paused TFJob is suspended by a patch (above).
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list
// +kubebuilder:rbac:groups=keda.sh,resources=scaledobjects,verbs=get;list
//
// Progress reports (--report-bind-address): the token a training pod sends
// is checked by a TokenReview; the pod itself needs no permission.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
//
// Pacing (--kube-api-qps=0 or -1): the manager reads the priority levels
// to tell whether the apiserver exempts its requests from API Priority and
// Fairness, and so paces nothing.
// +kubebuilder:rbac:groups=flowcontrol.apiserver.k8s.io,resources=prioritylevelconfigurations,verbs=get;list
