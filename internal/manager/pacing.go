package manager

// How the manager paces its requests to the apiserver (docs/pacing.md).
// controller-runtime gives every resource type a REST client with a token
// bucket of its own, so a client-side limit slows a burst of creates (2.1
// to 2.8 times an unlimited client, measured) without bounding the total.
// Where the apiserver applies API Priority and Fairness (APF) to the
// manager's requests, it queues them fairly in their priority level, and
// the manager sets no client-side limit at all.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// The token bucket of each resource type's client when nothing on the
// apiserver paces the manager: --kube-api-qps=0 falls back to it.
const (
	FallbackQPS   float32 = 200
	FallbackBurst int     = 400
)

// The values of --kube-api-qps that are not a rate.
const (
	// QPSAuto lets the apiserver pace the manager when it can, else
	// falls back to FallbackQPS and FallbackBurst.
	QPSAuto float32 = 0
	// QPSNoLimit sets no client-side limit, and refuses to start where
	// the apiserver would not pace the manager either.
	QPSNoLimit float32 = -1
)

// PacingMode says who paces the manager's requests.
type PacingMode string

const (
	// PacedByServer sets no client-side limit: APF queues the requests.
	PacedByServer PacingMode = "server"
	// PacedByClient paces with a token bucket per resource type.
	PacedByClient PacingMode = "client"
)

// Pacing is how the manager paces its requests, and why.
type Pacing struct {
	Mode PacingMode
	// QPS and Burst go into the rest.Config: client-go builds no rate
	// limiter for a QPS below 0 (a QPS of 0 would mean its default of 5).
	QPS    float32
	Burst  int
	Reason string
	// Unsure: --kube-api-qps=-1 where the manager cannot tell whether its
	// priority level is exempt, so possibly nothing paces it.
	Unsure bool
}

// noLimit is the rest.Config QPS that builds no client-side rate limiter.
const noLimit float32 = -1

// probeTimeout bounds the one request that decides the pacing.
const probeTimeout = 30 * time.Second

// DecidePacing turns --kube-api-qps and --kube-api-burst into a Pacing.
// For -1 and 0 it asks the apiserver of cfg, as the manager's own user,
// whether APF classifies the manager's requests into a priority level that
// is not exempt. It fails where --kube-api-qps=-1 would leave the
// manager's writes unpaced.
func DecidePacing(ctx context.Context, cfg *rest.Config, qps float32, burst int) (Pacing, error) {
	if qps > 0 {
		return Pacing{Mode: PacedByClient, QPS: qps, Burst: burst,
			Reason: fmt.Sprintf("--kube-api-qps=%v --kube-api-burst=%d", qps, burst)}, nil
	}
	apf, err := probeAPF(ctx, cfg)
	if err != nil {
		return Pacing{}, err
	}
	if qps == QPSNoLimit {
		return pacingWithoutLimit(apf)
	}
	return autoPacing(apf), nil
}

// autoPacing is --kube-api-qps=0: the server's pacing where it surely
// applies, else the fallback bucket.
func autoPacing(apf apfView) Pacing {
	bucket := func(why string) Pacing {
		return Pacing{Mode: PacedByClient, QPS: FallbackQPS, Burst: FallbackBurst, Reason: why}
	}
	switch {
	case !apf.classified:
		return bucket("the apiserver does not apply API Priority and Fairness to the manager's requests (no " + flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID + " header)")
	case apf.level == nil:
		return bucket(fmt.Sprintf("cannot tell whether the manager's priority level (uid %s) is exempt: %s", apf.levelUID, apf.unknownWhy))
	case isExempt(apf.level):
		return bucket(fmt.Sprintf("the apiserver exempts the manager's requests from API Priority and Fairness (priority level %q: is its user in system:masters?)", apf.level.Name))
	}
	return Pacing{Mode: PacedByServer, QPS: noLimit, Burst: 0,
		Reason: fmt.Sprintf("API Priority and Fairness queues the manager's requests in priority level %q", apf.level.Name)}
}

// pacingWithoutLimit is --kube-api-qps=-1: refused where the server would
// not pace the manager either.
func pacingWithoutLimit(apf apfView) (Pacing, error) {
	const fix = "set --kube-api-qps=0 (or --kube-api-qps=200 --kube-api-burst=400) to pace the manager itself"
	switch {
	case !apf.classified:
		return Pacing{}, fmt.Errorf("--kube-api-qps=-1: the apiserver does not apply API Priority and Fairness to the manager's requests (its answers carry no %s header), so nothing would pace the manager's writes; %s, or turn on API Priority and Fairness (kube-apiserver --enable-priority-and-fairness=true)",
			flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID, fix)
	case apf.level == nil:
		return Pacing{Mode: PacedByServer, QPS: noLimit, Unsure: true,
			Reason: fmt.Sprintf("--kube-api-qps=-1, but whether the manager's priority level (uid %s) is exempt is unknown: %s; if it is, nothing paces the manager's writes", apf.levelUID, apf.unknownWhy)}, nil
	case isExempt(apf.level):
		return Pacing{}, fmt.Errorf("--kube-api-qps=-1: the apiserver puts the manager's requests in the exempt priority level %q (its user is in system:masters, or a FlowSchema exempts it), so nothing would pace the manager's writes; %s, or run the manager as a user that is not exempt, such as the Helm chart's ServiceAccount",
			apf.level.Name, fix)
	}
	return Pacing{Mode: PacedByServer, QPS: noLimit,
		Reason: fmt.Sprintf("--kube-api-qps=-1: API Priority and Fairness queues the manager's requests in priority level %q", apf.level.Name)}, nil
}

func isExempt(pl *flowcontrolv1.PriorityLevelConfiguration) bool {
	return pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt
}

// log writes the one line that says how the manager paces, and why.
func (p Pacing) log(logger logr.Logger) {
	if p.Unsure {
		logger.Error(nil, "Writing without a client-side limit, though the apiserver may not pace the manager", "reason", p.Reason)
		return
	}
	if p.Mode == PacedByServer {
		logger.Info("The apiserver paces the manager's requests: no client-side limit", "reason", p.Reason)
		return
	}
	logger.Info("The manager paces its own requests with a token bucket per resource type", "qps", p.QPS, "burst", p.Burst, "reason", p.Reason)
}

// apfView is what one request tells of how APF treats the manager.
type apfView struct {
	// classified: the answer carried APF's headers.
	classified bool
	levelUID   string
	// level is the manager's PriorityLevelConfiguration; nil when it
	// could not be read, unknownWhy says why.
	level      *flowcontrolv1.PriorityLevelConfiguration
	unknownWhy string
}

// probeAPF lists the PriorityLevelConfigurations as the manager: APF runs
// after authentication and before authorization, so the answer carries the
// UID of the manager's priority level even when the list is Forbidden, and
// the list, when allowed, says whether that level is exempt. A resource
// request is classified as the manager's writes are by every FlowSchema
// that matches all of its resources (the built-in ones, the chart's).
func probeAPF(ctx context.Context, cfg *rest.Config) (apfView, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &flowcontrolv1.SchemeGroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return apfView{}, fmt.Errorf("asking the apiserver how it paces the manager: %w", err)
	}
	rc, err := rest.RESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return apfView{}, fmt.Errorf("asking the apiserver how it paces the manager: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rc.Get().Resource("prioritylevelconfigurations").URL().String(), nil)
	if err != nil {
		return apfView{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return apfView{}, fmt.Errorf("asking the apiserver how it paces the manager: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusUnauthorized {
		return apfView{}, errors.New("asking the apiserver how it paces the manager: 401 Unauthorized: the apiserver does not accept the manager's credentials (check --kubeconfig or the ServiceAccount token)")
	}
	view := apfView{levelUID: resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)}
	view.classified = view.levelUID != ""
	if !view.classified {
		return view, nil
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusForbidden:
		view.unknownWhy = "the manager may not list prioritylevelconfigurations.flowcontrol.apiserver.k8s.io (grant get and list on them, as the Helm chart does)"
		return view, nil
	default:
		view.unknownWhy = fmt.Sprintf("listing prioritylevelconfigurations.flowcontrol.apiserver.k8s.io/v1 answered %s", resp.Status)
		return view, nil
	}
	var levels flowcontrolv1.PriorityLevelConfigurationList
	if err := json.NewDecoder(resp.Body).Decode(&levels); err != nil {
		view.unknownWhy = fmt.Sprintf("reading the list of prioritylevelconfigurations: %v", err)
		return view, nil
	}
	for i := range levels.Items {
		if string(levels.Items[i].UID) == view.levelUID {
			view.level = &levels.Items[i]
			return view, nil
		}
	}
	view.unknownWhy = "no PriorityLevelConfiguration has that uid"
	return view, nil
}
