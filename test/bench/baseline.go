package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// baselineResult is what the plain client measured.
type baselineResult struct {
	pods, services int
	concurrency    int
	elapsed        time.Duration
	run            window
}

// runBaseline creates copies of the operator's pods and services in a
// fresh namespace with a plain client and high concurrency: the speed of
// the apiserver on this machine for the same objects, with no operator,
// until a watch has seen them all.
func runBaseline(ctx context.Context, c *cluster, concurrency int) (baselineResult, error) {
	return runBaselineOf(ctx, c, benchNamespace, baselineNamespace, concurrency)
}

// runBaselineOf copies the objects of namespace from into namespace to.
func runBaselineOf(ctx context.Context, c *cluster, from, to string, concurrency int) (baselineResult, error) {
	res := baselineResult{concurrency: concurrency}
	objects, err := baselineObjects(ctx, c, from, to)
	if err != nil {
		return res, err
	}
	for _, o := range objects {
		if _, ok := o.(*corev1.Pod); ok {
			res.pods++
		} else {
			res.services++
		}
	}
	if err := c.namespace(ctx, to); err != nil {
		return res, err
	}
	// Watched and timed as the operator's objects are: until a watch has
	// seen every one, the apiserver sending each to a watcher besides.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pods, err := c.watchArrivals(wctx, podsResource, to)
	if err != nil {
		return res, err
	}
	services, err := c.watchArrivals(wctx, servicesResource, to)
	if err != nil {
		return res, err
	}
	before, err := takeMark(ctx, c, nil)
	if err != nil {
		return res, err
	}
	start := time.Now()
	err = forEach(ctx, objects, concurrency, func(ctx context.Context, o client.Object) error {
		if err := c.ctrl.Create(ctx, o); err != nil {
			return fmt.Errorf("baseline: creating %s: %w", o.GetName(), err)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	lastPod, err := pods.waitFor(ctx, res.pods)
	if err != nil {
		return res, err
	}
	lastService, err := services.waitFor(ctx, res.services)
	if err != nil {
		return res, err
	}
	res.elapsed = max(lastPod.Sub(start), lastService.Sub(start))
	after, err := takeMark(ctx, c, nil)
	res.run = before.until(after)
	return res, err
}

// baselineObjects copies the pods and services the operator created, job
// by job (services first, as the operator creates them), without what the
// apiserver added (status, uid, defaults its admission fills in again)
// and without owner references, which would point into another
// namespace. The copies name another operator (a label value of about
// the same length), so that a manager started later does not cache them.
func baselineObjects(ctx context.Context, c *cluster, from, to string) ([]client.Object, error) {
	var pods corev1.PodList
	if err := c.ctrl.List(ctx, &pods, client.InNamespace(from)); err != nil {
		return nil, err
	}
	var services corev1.ServiceList
	if err := c.ctrl.List(ctx, &services, client.InNamespace(from)); err != nil {
		return nil, err
	}
	meta := func(m metav1.ObjectMeta) metav1.ObjectMeta {
		labels := maps.Clone(m.Labels)
		labels[kubeflowv1.OperatorNameLabel] = baselineOperator
		return metav1.ObjectMeta{Name: m.Name, Namespace: to, Labels: labels, Annotations: m.Annotations, Finalizers: m.Finalizers}
	}
	byJob := map[string][]client.Object{}
	for i := range services.Items {
		s := &services.Items[i]
		job := s.Labels[kubeflowv1.JobNameLabel]
		byJob[job] = append(byJob[job], &corev1.Service{ObjectMeta: meta(s.ObjectMeta), Spec: s.Spec})
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		pod := &corev1.Pod{ObjectMeta: meta(p.ObjectMeta), Spec: p.Spec}
		// Set by the Priority and ServiceAccount admission plugins, which
		// set them again.
		pod.Spec.Priority, pod.Spec.PreemptionPolicy = nil, nil
		pod.Spec.Volumes = withoutTokenVolume(pod.Spec.Volumes)
		for j := range pod.Spec.Containers {
			pod.Spec.Containers[j].VolumeMounts = withoutTokenMount(pod.Spec.Containers[j].VolumeMounts)
		}
		job := p.Labels[kubeflowv1.JobNameLabel]
		byJob[job] = append(byJob[job], pod)
	}
	var out []client.Object
	for _, job := range slices.Sorted(maps.Keys(byJob)) {
		out = append(out, byJob[job]...)
	}
	return out, nil
}

// baselineOperator is the operator-name label of the baseline's copies.
const baselineOperator = "bench-baseline"

// tokenVolumePrefix names the service-account token volume that the
// ServiceAccount admission plugin adds to every pod.
const tokenVolumePrefix = "kube-api-access-"

func withoutTokenVolume(vols []corev1.Volume) []corev1.Volume {
	var out []corev1.Volume
	for _, v := range vols {
		if !strings.HasPrefix(v.Name, tokenVolumePrefix) {
			out = append(out, v)
		}
	}
	return out
}

func withoutTokenMount(mounts []corev1.VolumeMount) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	for _, m := range mounts {
		if !strings.HasPrefix(m.Name, tokenVolumePrefix) {
			out = append(out, m)
		}
	}
	return out
}
