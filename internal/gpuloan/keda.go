package gpuloan

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/backfill-dev/backfill/internal/tide"
)

// ScaledObjects is KEDA's ScaledObject, read through the dynamic client so
// that KEDA is no dependency of the manager.
var ScaledObjects = schema.GroupVersionResource{Group: "keda.sh", Version: "v1alpha1", Resource: "scaledobjects"}

// scaledObject is what the forecast needs of a ScaledObject.
type scaledObject struct {
	name string
	// target is the workload it scales, as workload.key spells it.
	target string
	// minReplicas is its minReplicaCount (KEDA's default 0).
	minReplicas int32
	// crons are its cron triggers; others says it has triggers of other
	// types too, which no schedule foretells.
	crons  []tide.CronTrigger
	others bool
	// err says why its cron triggers cannot be read.
	err error
}

// readScaledObjects lists every ScaledObject, by target. ok is false when
// the cluster serves no ScaledObject (no KEDA): then there is nothing to
// read and no error.
func readScaledObjects(ctx context.Context, dc dynamic.Interface) (byTarget map[string]scaledObject, ok bool, err error) {
	list, err := dc.Resource(ScaledObjects).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("listing KEDA ScaledObjects (%s): %w", ScaledObjects.GroupResource(), err)
	}
	return scaledObjectsOf(list.Items), true, nil
}

// scaledObjectsOf reads listed ScaledObjects, by target.
func scaledObjectsOf(items []unstructured.Unstructured) map[string]scaledObject {
	out := map[string]scaledObject{}
	for i := range items {
		so := scaledObjectOf(&items[i])
		out[so.target] = so
	}
	return out
}

// scaledObjectOf reads a ScaledObject as KEDA does: scaleTargetRef.kind
// defaults to Deployment; each cron trigger's metadata holds timezone,
// start, end and desiredReplicas, all strings.
func scaledObjectOf(u *unstructured.Unstructured) scaledObject {
	so := scaledObject{name: u.GetNamespace() + "/" + u.GetName()}
	name, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "name")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "kind")
	if kind == "" {
		kind = kindDeployment
	}
	so.target = kind + "/" + u.GetNamespace() + "/" + name
	if m, found, err := unstructured.NestedInt64(u.Object, "spec", "minReplicaCount"); found && err == nil {
		so.minReplicas = int32(m)
	}
	triggers, _, _ := unstructured.NestedSlice(u.Object, "spec", "triggers")
	for i, t := range triggers {
		trigger, _ := t.(map[string]any)
		if typ, _, _ := unstructured.NestedString(trigger, "type"); typ != "cron" {
			so.others = true
			continue
		}
		md, _, _ := unstructured.NestedStringMap(trigger, "metadata")
		desired, err := strconv.ParseInt(md["desiredReplicas"], 10, 32)
		if err != nil {
			so.err = fmt.Errorf("trigger %d: desiredReplicas %q is not a whole number", i+1, md["desiredReplicas"])
			continue
		}
		so.crons = append(so.crons, tide.CronTrigger{Timezone: md["timezone"], Start: md["start"], End: md["end"], DesiredReplicas: int32(desired)})
	}
	return so
}

// hasCrons reports whether the ScaledObject has cron triggers, readable
// or not.
func (so scaledObject) hasCrons() bool { return len(so.crons) > 0 || so.err != nil }

// schedule is its cron triggers as a schedule, floor replicas outside
// their windows, or why they cannot be read.
func (so scaledObject) schedule(floor int32) (*tide.CronSchedule, error) {
	err := so.err
	var s *tide.CronSchedule
	if err == nil {
		s, err = tide.NewCronSchedule(so.crons, floor)
	}
	if err != nil {
		return nil, fmt.Errorf("KEDA ScaledObject %s: %w", so.name, err)
	}
	return s, nil
}
