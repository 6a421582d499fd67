package doctor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The messages are the apiserver's, as its ResourceQuota and LimitRanger
// admission plugins and pod validation write them (Kubernetes 1.37), as
// the operator records them in FailedCreatePod events.
func TestParseRefusal(t *testing.T) {
	q := resource.MustParse
	cases := map[string]struct {
		msg    string
		want   apiRefusal
		wantOK bool
	}{
		"must specify, the issue's refusal": {
			msg: `creating pod j-worker-1: pods "j-worker-1" is forbidden: failed quota: team: must specify limits.cpu for: tensorflow; limits.memory for: tensorflow; requests.cpu for: tensorflow; requests.memory for: tensorflow`,
			want: apiRefusal{pod: "j-worker-1", quotas: []quotaViolation{
				{quota: "team", rule: quotaMustSpecify, resource: "limits.cpu", containers: []string{"tensorflow"}},
				{quota: "team", rule: quotaMustSpecify, resource: "limits.memory", containers: []string{"tensorflow"}},
				{quota: "team", rule: quotaMustSpecify, resource: "requests.cpu", containers: []string{"tensorflow"}},
				{quota: "team", rule: quotaMustSpecify, resource: "requests.memory", containers: []string{"tensorflow"}},
			}},
			wantOK: true,
		},
		"must specify, several containers": {
			msg: `pods "j-ps-0" is forbidden: failed quota: compute-2: must specify limits.cpu for: fetch,tensorflow`,
			want: apiRefusal{pod: "j-ps-0", quotas: []quotaViolation{
				{quota: "compute-2", rule: quotaMustSpecify, resource: "limits.cpu", containers: []string{"fetch", "tensorflow"}},
			}},
			wantOK: true,
		},
		"exceeded, two resources": {
			msg: `creating pod resnet-worker-1: pods "resnet-worker-1" is forbidden: exceeded quota: compute, requested: limits.cpu=2,requests.nvidia.com/gpu=1, used: limits.cpu=7,requests.nvidia.com/gpu=4, limited: limits.cpu=8,requests.nvidia.com/gpu=4`,
			want: apiRefusal{pod: "resnet-worker-1", quotas: []quotaViolation{
				{quota: "compute", rule: quotaExceeded, resource: "limits.cpu", need: q("2"), used: q("7"), hard: q("8"), pods: 1},
				{quota: "compute", rule: quotaExceeded, resource: "requests.nvidia.com/gpu", need: q("1"), used: q("4"), hard: q("4"), pods: 1},
			}},
			wantOK: true,
		},
		"exceeded, reclaimed CPU as the apiserver writes it": {
			msg: `pods "j-worker-1" is forbidden: exceeded quota: batch, requested: requests.backfill.dev/batch-cpu=1k, used: requests.backfill.dev/batch-cpu=1k, limited: requests.backfill.dev/batch-cpu=1500`,
			want: apiRefusal{pod: "j-worker-1", quotas: []quotaViolation{
				{quota: "batch", rule: quotaExceeded, resource: "requests.backfill.dev/batch-cpu", need: q("1k"), used: q("1k"), hard: q("1500"), pods: 1},
			}},
			wantOK: true,
		},
		"status unknown": {
			msg: `pods "j-worker-0" is forbidden: status unknown for quota: team, resources: limits.cpu,requests.cpu`,
			want: apiRefusal{pod: "j-worker-0", quotas: []quotaViolation{
				{quota: "team", rule: quotaStatusUnknown, resource: "limits.cpu"},
				{quota: "team", rule: quotaStatusUnknown, resource: "requests.cpu"},
			}},
			wantOK: true,
		},
		"no quota covers a limited resource": {
			msg: `pods "j-worker-0" is forbidden: insufficient quota to consume: requests.nvidia.com/gpu`,
			want: apiRefusal{pod: "j-worker-0", quotas: []quotaViolation{
				{rule: quotaNotCovered, resource: "requests.nvidia.com/gpu"},
			}},
			wantOK: true,
		},
		"LimitRange max": {
			msg: `creating pod big-worker-0: pods "big-worker-0" is forbidden: maximum cpu usage per Container is 1, but limit is 2`,
			want: apiRefusal{pod: "big-worker-0", limits: []limitViolation{
				{rule: limitMax, limitType: "Container", resource: "cpu", enforced: q("1"), side: "limit", observed: "2"},
			}},
			wantOK: true,
		},
		"LimitRange, several at once": {
			msg: `pods "big-worker-0" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per Container is 1Gi, but limit is 2Gi, minimum memory usage per Pod is 1Gi.  No request is specified]`,
			want: apiRefusal{pod: "big-worker-0", limits: []limitViolation{
				{rule: limitMin, limitType: "Pod", resource: "memory", enforced: q("1Gi"), side: "request", unspecified: true},
				{rule: limitMax, limitType: "Container", resource: "cpu", enforced: q("1"), side: "limit", observed: "2"},
				{rule: limitMax, limitType: "Container", resource: "memory", enforced: q("1Gi"), side: "limit", observed: "2Gi"},
			}},
			wantOK: true,
		},
		"LimitRange min, a request of 0": {
			msg: `pods "j-worker-0" is forbidden: minimum cpu usage per Container is 100m, but request is 0`,
			want: apiRefusal{pod: "j-worker-0", limits: []limitViolation{
				{rule: limitMin, limitType: "Container", resource: "cpu", enforced: q("100m"), side: "request", observed: "0"},
			}},
			wantOK: true,
		},
		"LimitRange max, no limit": {
			msg: `pods "j-worker-0" is forbidden: maximum memory usage per Container is 4Gi.  No limit is specified`,
			want: apiRefusal{pod: "j-worker-0", limits: []limitViolation{
				{rule: limitMax, limitType: "Container", resource: "memory", enforced: q("4Gi"), side: "limit", unspecified: true},
			}},
			wantOK: true,
		},
		"LimitRange ratio": {
			msg: `pods "j-worker-0" is forbidden: cpu max limit to request ratio per Container is 4, but provided ratio is 8.000000`,
			want: apiRefusal{pod: "j-worker-0", limits: []limitViolation{
				{rule: limitRatio, limitType: "Container", resource: "cpu", enforced: q("4"), side: "ratio", observed: "8"},
			}},
			wantOK: true,
		},
		"LimitRange ratio, a request of 0": {
			msg: `pods "j-worker-0" is forbidden: memory max limit to request ratio per Container is 2, but no request is specified or request is 0`,
			want: apiRefusal{pod: "j-worker-0", limits: []limitViolation{
				{rule: limitRatio, limitType: "Container", resource: "memory", enforced: q("2"), side: "request", unspecified: true},
			}},
			wantOK: true,
		},
		"a default limit below the request": {
			msg: `creating pod j-worker-0: Pod "j-worker-0" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 500m`,
			want: apiRefusal{pod: "j-worker-0", limits: []limitViolation{
				{rule: limitDefault, limitType: "Container", resource: "cpu", enforced: q("500m"), side: "request", observed: "2", container: "spec.containers[0]"},
			}},
			wantOK: true,
		},
		"Pod Security: not a quota or LimitRange": {
			msg:  `creating pod j-worker-0: pods "j-worker-0" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "tensorflow" must set securityContext.allowPrivilegeEscalation=false)`,
			want: apiRefusal{pod: "j-worker-0"},
		},
		"not an apiserver refusal": {
			msg: `creating pod j-worker-0: Post "https://10.0.0.1/api/v1/namespaces/q/pods": context deadline exceeded`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := parseRefusal(tc.msg)
			if ok != tc.wantOK {
				t.Errorf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(apiRefusal{}, quotaViolation{}, limitViolation{}), quantities); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// quantities compares quantities by value, not by how they are written.
var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
