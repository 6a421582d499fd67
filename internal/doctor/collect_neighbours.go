package doctor

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/queueing"
)

// KueueView is what doctor read of Kueue.
type KueueView struct {
	// Served: the apiserver serves Kueue's Workloads (Kueue is installed).
	Served bool
	// Workloads of the namespaces in scope, by the UID of the TFJob that
	// owns each.
	Workloads map[types.UID]*queueing.Workload
	// Frameworks is integrations.frameworks of Kueue's configuration; nil
	// when it could not be read, and ConfigNote says why.
	Frameworks []string
	ConfigNote string
}

// readNeighbours reads what else may act on TFJobs: the TFJob CRD as
// installed, every Deployment, and the Leases of other TFJob controllers;
// and every StatefulSet, which with the Deployments are the online
// workloads GPU loans forecast.
// A refused read is noted in s.Forbidden, whatever the scope: even a
// cluster-wide user may be refused CRDs or Deployments, and the other
// checks need neither.
func (s *Snapshot) readNeighbours(ctx context.Context, c client.Client) error {
	crd, err := readCRD(ctx, c)
	switch {
	case apierrors.IsForbidden(err):
		s.Forbidden[readCRDs] = true
	case err != nil:
		return err
	default:
		s.CRD = crd
	}
	var deployments appsv1.DeploymentList
	var sets appsv1.StatefulSetList
	var leases coordinationv1.LeaseList
	for _, l := range []struct {
		what string
		list client.ObjectList
		opts []client.ListOption
	}{
		{readDeployments, &deployments, nil},
		{readStatefulSets, &sets, nil},
		{readLeases, &leases, []client.ListOption{client.MatchingFields{"metadata.name": TrainingOperatorLeaseName}}},
	} {
		err := c.List(ctx, l.list, l.opts...)
		if apierrors.IsForbidden(err) {
			s.Forbidden[l.what] = true
			continue
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", l.what, err)
		}
	}
	s.Deployments, s.StatefulSets, s.ControllerLeases = deployments.Items, sets.Items, leases.Items
	return nil
}

// readCRD reads the TFJob CRD, nil when there is none. It is read as an
// unstructured object, so that the client's scheme need not know
// apiextensions.
func readCRD(ctx context.Context, c client.Reader) (*apiextensionsv1.CustomResourceDefinition, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	err := c.Get(ctx, client.ObjectKey{Name: CRDName}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading CustomResourceDefinition %s: %w", CRDName, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return nil, fmt.Errorf("decoding CustomResourceDefinition %s: %w", CRDName, err)
	}
	return crd, nil
}

// readKueue reads Kueue's Workloads of namespace ("" for all) and its
// configuration, when Kueue is installed.
func (s *Snapshot) readKueue(ctx context.Context, c client.Reader, namespace string) error {
	workloads, err := queueing.ListWorkloads(ctx, c, namespace)
	switch {
	case errors.Is(err, queueing.ErrNoKueue):
		return nil
	case apierrors.IsForbidden(err):
		s.Kueue.Served = true
		s.Forbidden[readWorkloads] = true
		return nil
	case err != nil:
		return err
	}
	s.Kueue.Served, s.Kueue.Workloads = true, workloads
	s.Kueue.Frameworks, s.Kueue.ConfigNote = readKueueFrameworks(ctx, c)
	return nil
}

// readKueueFrameworks reads integrations.frameworks from Kueue's
// configuration where its standard install keeps it, or says why not.
func readKueueFrameworks(ctx context.Context, c client.Reader) ([]string, string) {
	ref := "ConfigMap " + queueing.ConfigNamespace + "/" + queueing.ConfigMapName
	var cm corev1.ConfigMap
	err := c.Get(ctx, client.ObjectKey{Namespace: queueing.ConfigNamespace, Name: queueing.ConfigMapName}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil, "there is no " + ref + " to read Kueue's configuration from"
	case apierrors.IsForbidden(err):
		return nil, "you may not read " + ref + ", which holds Kueue's configuration"
	case err != nil:
		return nil, fmt.Sprintf("reading %s failed: %v", ref, err)
	}
	config, found := cm.Data[queueing.ConfigKey]
	if !found {
		return nil, ref + " has no key " + queueing.ConfigKey
	}
	frameworks, err := queueing.Frameworks(config)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", ref, err)
	}
	return frameworks, ""
}
