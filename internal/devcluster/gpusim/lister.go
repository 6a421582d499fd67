package gpusim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Lister gives the simulator the cluster's nodes and pods, read afresh at
// every scrape.
type Lister interface {
	Nodes(ctx context.Context) ([]corev1.Node, error)
	Pods(ctx context.Context) ([]corev1.Pod, error)
}

// ClientLister is a Lister over a controller-runtime client.Reader: a cached
// client (a manager's) serves scrapes from its informers, a direct one asks
// the apiserver each time.
type ClientLister struct {
	Reader client.Reader
}

var _ Lister = ClientLister{}

// Nodes lists every node of the cluster.
func (l ClientLister) Nodes(ctx context.Context) ([]corev1.Node, error) {
	var list corev1.NodeList
	if err := l.Reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	return list.Items, nil
}

// Pods lists the pods of every namespace.
func (l ClientLister) Pods(ctx context.Context) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := l.Reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return list.Items, nil
}
