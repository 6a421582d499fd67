package doctor

import (
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The apiserver's words when it refuses to create a pod, as the operator
// records them in the job's FailedCreatePod events. The ResourceQuota
// admission plugin and its pod evaluator write
//
//	failed quota: NAME: must specify limits.cpu for: tensorflow; requests.cpu for: fetch,tensorflow
//	exceeded quota: NAME, requested: limits.cpu=2, used: limits.cpu=7, limited: limits.cpu=8
//	status unknown for quota: NAME, resources: limits.cpu,requests.cpu
//	insufficient quota to consume: requests.nvidia.com/gpu
//
// and the LimitRanger plugin, which names no LimitRange, one or more of
//
//	maximum cpu usage per Container is 1, but limit is 2
//	minimum memory usage per Pod is 1Gi.  No request is specified
//	cpu max limit to request ratio per Container is 4, but provided ratio is 8.000000
//	cpu max limit to request ratio per Container is 4, but no request is specified or request is 0
//
// (several joined as "[a, b]"). A LimitRange's default limit below a
// container's request makes the pod invalid instead:
//
//	spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 500m

// quotaRule is the kind of a ResourceQuota's refusal.
type quotaRule string

const (
	// quotaMustSpecify: the quota counts cpu or memory, and a container
	// states no request or limit of it.
	quotaMustSpecify quotaRule = "must specify"
	// quotaExceeded: used plus what the pod asks would pass hard.
	quotaExceeded quotaRule = "exceeded"
	// quotaStatusUnknown: the quota controller has not counted the usage.
	quotaStatusUnknown quotaRule = "status unknown"
	// quotaNotCovered: the apiserver's admission configuration wants a
	// quota covering the resource (limitedResources), and none does.
	quotaNotCovered quotaRule = "not covered"
)

// quotaViolation is one resource of one ResourceQuota that refuses a pod.
type quotaViolation struct {
	quota    string // "" for quotaNotCovered
	rule     quotaRule
	resource corev1.ResourceName
	// containers lack the resource (quotaMustSpecify).
	containers []string
	// used and hard are the quota's; need is what one pod asks, most is
	// the largest one pod asks, pods how many are missing and room how
	// many of them fit (quotaExceeded).
	used, hard, need resource.Quantity
	pods, room       int
}

// limitRule is the constraint of a LimitRange a pod breaks.
type limitRule string

const (
	limitMin   limitRule = "min"
	limitMax   limitRule = "max"
	limitRatio limitRule = "maxLimitRequestRatio"
	// limitDefault: a LimitRange's default limit is below the request.
	limitDefault limitRule = "default"
)

// limitViolation is one constraint of a LimitRange that refuses a pod.
type limitViolation struct {
	limitRange string // "" when the apiserver's message is all we know
	rule       limitRule
	limitType  corev1.LimitType
	resource   corev1.ResourceName
	enforced   resource.Quantity
	// side is what broke it, "request" or "limit"; "ratio" for a ratio
	// over the maximum.
	side string
	// observed is the request, limit or ratio; unset when the side is
	// not specified (or 0, for a ratio).
	observed    string
	unspecified bool
	// replica and container are where it broke, when known; container
	// may be a field path ("spec.containers[0]") until the pod's spec
	// names it.
	replica, container string
}

// apiRefusal is what one refusal message says.
type apiRefusal struct {
	pod    string
	quotas []quotaViolation
	limits []limitViolation
}

var (
	refusedPodPattern    = regexp.MustCompile(`(?i:pods?) "([^"]+)" is (?:forbidden|invalid)`)
	mustSpecifyPattern   = regexp.MustCompile(`failed quota: ([^:\s]+): must specify (.+)`)
	mustSpecifyPart      = regexp.MustCompile(`^\s*(\S+) for: ([^;\s]+)`)
	exceededPattern      = regexp.MustCompile(`exceeded quota: ([^,\s]+), requested: (\S+), used: (\S+), limited: ([^\s\]]+)`)
	statusUnknownPattern = regexp.MustCompile(`status unknown for quota: ([^,\s]+), resources: ([^\s\]]+)`)
	notCoveredPattern    = regexp.MustCompile(`insufficient quota to consume: ([^\s\]]+)`)
	// A quantity ends at a space, a comma or the "]" of a list.
	limitNotSpecified = regexp.MustCompile(`(minimum|maximum) (\S+) usage per (\w+) is (\S+?)\.  No (request|limit) is specified`)
	limitObserved     = regexp.MustCompile(`(minimum|maximum) (\S+) usage per (\w+) is ([^,\s]+), but (request|limit) is ([^,\]\s]+)`)
	ratioNotSpecified = regexp.MustCompile(`(\S+) max limit to request ratio per (\w+) is ([^,\s]+), but no (request|limit) is specified or (?:request|limit) is 0`)
	ratioObserved     = regexp.MustCompile(`(\S+) max limit to request ratio per (\w+) is ([^,\s]+), but provided ratio is ([0-9.]+)`)
	requestOverLimit  = regexp.MustCompile(`spec\.(containers|initContainers)\[(\d+)\]\.resources\.requests: Invalid value: "([^"]*)": must be less than or equal to (\S+) limit of ([^,\]\s]+)`)
)

// parseRefusal reads the quota and LimitRange rules out of a refusal
// message; ok is false when it names none.
func parseRefusal(msg string) (r apiRefusal, ok bool) {
	if m := refusedPodPattern.FindStringSubmatch(msg); m != nil {
		r.pod = m[1]
	}
	if m := mustSpecifyPattern.FindStringSubmatch(msg); m != nil {
		for _, part := range strings.Split(m[2], "; ") {
			if p := mustSpecifyPart.FindStringSubmatch(part); p != nil {
				r.quotas = append(r.quotas, quotaViolation{quota: m[1], rule: quotaMustSpecify,
					resource: corev1.ResourceName(p[1]), containers: strings.Split(p[2], ",")})
			}
		}
	}
	if m := exceededPattern.FindStringSubmatch(msg); m != nil {
		requested, used, hard := parseUsage(m[2]), parseUsage(m[3]), parseUsage(m[4])
		for _, name := range sortedNames(requested) {
			r.quotas = append(r.quotas, quotaViolation{quota: m[1], rule: quotaExceeded, resource: name,
				need: requested[name], used: used[name], hard: hard[name], pods: 1})
		}
	}
	if m := statusUnknownPattern.FindStringSubmatch(msg); m != nil {
		for _, name := range strings.Split(m[2], ",") {
			r.quotas = append(r.quotas, quotaViolation{quota: m[1], rule: quotaStatusUnknown, resource: corev1.ResourceName(name)})
		}
	}
	if m := notCoveredPattern.FindStringSubmatch(msg); m != nil {
		for _, name := range strings.Split(m[1], ",") {
			r.quotas = append(r.quotas, quotaViolation{rule: quotaNotCovered, resource: corev1.ResourceName(name)})
		}
	}
	r.limits = parseLimitViolations(msg)
	return r, len(r.quotas) > 0 || len(r.limits) > 0
}

// parseLimitViolations reads the LimitRanger's constraints, and a request
// over its limit, which a LimitRange's default limit causes.
func parseLimitViolations(msg string) []limitViolation {
	var out []limitViolation
	rule := map[string]limitRule{"minimum": limitMin, "maximum": limitMax}
	for _, m := range limitNotSpecified.FindAllStringSubmatch(msg, -1) {
		out = append(out, limitViolation{rule: rule[m[1]], resource: corev1.ResourceName(m[2]), limitType: corev1.LimitType(m[3]),
			enforced: quantity(m[4]), side: m[5], unspecified: true})
	}
	for _, m := range limitObserved.FindAllStringSubmatch(msg, -1) {
		out = append(out, limitViolation{rule: rule[m[1]], resource: corev1.ResourceName(m[2]), limitType: corev1.LimitType(m[3]),
			enforced: quantity(m[4]), side: m[5], observed: m[6]})
	}
	for _, m := range ratioNotSpecified.FindAllStringSubmatch(msg, -1) {
		out = append(out, limitViolation{rule: limitRatio, resource: corev1.ResourceName(m[1]), limitType: corev1.LimitType(m[2]),
			enforced: quantity(m[3]), side: m[4], unspecified: true})
	}
	for _, m := range ratioObserved.FindAllStringSubmatch(msg, -1) {
		out = append(out, limitViolation{rule: limitRatio, resource: corev1.ResourceName(m[1]), limitType: corev1.LimitType(m[2]),
			enforced: quantity(m[3]), side: "ratio", observed: trimRatio(m[4])})
	}
	for _, m := range requestOverLimit.FindAllStringSubmatch(msg, -1) {
		out = append(out, limitViolation{rule: limitDefault, resource: corev1.ResourceName(m[4]), limitType: corev1.LimitTypeContainer,
			enforced: quantity(m[5]), side: "request", observed: m[3], container: "spec." + m[1] + "[" + m[2] + "]"})
	}
	return out
}

// parseUsage reads the apiserver's "limits.cpu=2,requests.cpu=1".
func parseUsage(s string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(kv, "=")
		if q, err := resource.ParseQuantity(value); ok && err == nil {
			out[corev1.ResourceName(name)] = q
		}
	}
	return out
}

// quantity parses a quantity of a message; a malformed one reads as 0.
func quantity(s string) resource.Quantity {
	q, _ := resource.ParseQuantity(s)
	return q
}

// trimRatio writes the apiserver's "8.000000" as "8".
func trimRatio(s string) string {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}
