package report

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/backfill-dev/backfill/internal/progress"
)

// Route is the one route served: tfjob.ReportPath's pattern. Any other
// path is 404, any other method 405.
const Route = "POST /v1/namespaces/{namespace}/tfjobs/{name}/progress"

// Recorder keeps accepted reports: the progress.Store. It is the only
// thing a report writes to.
type Recorder interface {
	Record(job types.NamespacedName, jobUID, podUID types.UID, r progress.Report, at time.Time) error
}

// Handler serves reports.
type Handler struct {
	authn   Authenticator
	tokens  *tokenCache
	objects Objects
	store   Recorder
	clock   clock.PassiveClock
	limits  *podLimits
	log     logr.Logger
	mux     *http.ServeMux
}

// NewHandler serves reports, authenticating their tokens with authn (and
// remembering what it said, tokencache.go), checking their pods and jobs
// in objects and keeping them in store, at the time of clk.
func NewHandler(authn Authenticator, objects Objects, store Recorder, clk clock.PassiveClock, log logr.Logger) *Handler {
	h := &Handler{authn: authn, tokens: newTokenCache(), objects: objects, store: store, clock: clk, limits: newPodLimits(), log: log, mux: http.NewServeMux()}
	h.mux.HandleFunc(Route, h.report)
	return h
}

// ServeHTTP serves Route; any other path is 404, another method 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// report serves one report: each step refuses with its own status, in
// this order, and only a report that passes them all is recorded.
func (h *Handler) report(w http.ResponseWriter, r *http.Request) {
	job := types.NamespacedName{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	log := h.log.WithValues("tfjob", job)
	if refused := h.accept(w, r, job, log); refused != nil {
		log.V(1).Info("Refused a progress report", "status", refused.status, "reason", refused.reason, "remote", r.RemoteAddr)
		refused.write(w)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) accept(w http.ResponseWriter, r *http.Request, job types.NamespacedName, log logr.Logger) *refusal {
	ctx := r.Context()
	token, refused := bearerToken(r)
	if refused != nil {
		return refused
	}
	if refused, ok := h.tokens.denial(token, job, h.clock.Now()); ok {
		return refused
	}
	id, reviewed, refused := h.authenticate(ctx, token, log)
	if refused != nil {
		return refused
	}
	tfjob, pod, refused := authorize(ctx, h.objects, id, job)
	if refused != nil {
		if reviewed && (refused.status == http.StatusForbidden || refused.status == http.StatusNotFound) {
			h.tokens.deny(token, job, refused, h.clock.Now())
		}
		return refused
	}
	now := h.clock.Now()
	if reviewed {
		// Trusted from its review on, not from its latest use: it is
		// reviewed again once the trust runs out.
		h.tokens.trust(token, id, now)
	}
	if !h.limits.allow(pod.UID, now) {
		return refuse(http.StatusTooManyRequests, "pod %s reports more than %d times a second: report every few seconds at most", pod.Name, reportsPerSecond)
	}
	body, refused := readBody(w, r)
	if refused != nil {
		return refused
	}
	report, err := progress.DecodeReport(body)
	if err != nil {
		return refuse(http.StatusBadRequest, "%v", err)
	}
	var back progress.ErrStepBackwards
	switch err := h.store.Record(job, tfjob.UID, pod.UID, report, now); {
	case errors.As(err, &back):
		return refuse(http.StatusBadRequest, "%v", err)
	case err != nil:
		log.Error(err, "Cannot record a progress report")
		return refuse(http.StatusInternalServerError, "cannot record the report")
	}
	log.V(2).Info("Recorded a progress report", "pod", pod.Name, "step", report.Step, "checkpoint", report.Checkpoint)
	return nil
}

// authenticate is who token speaks for, and whether authn said so now:
// what the cache remembers of the token, else what authn says, of which a
// refusal for good is remembered.
func (h *Handler) authenticate(ctx context.Context, token string, log logr.Logger) (Identity, bool, *refusal) {
	id, err, known := h.tokens.lookup(token, h.clock.Now())
	if !known {
		id, err = h.authn.Authenticate(ctx, token)
		if errors.Is(err, ErrUnauthenticated) || errors.Is(err, ErrPodGone) {
			h.tokens.refuse(token, err, h.clock.Now())
		}
	}
	var busy *busyError
	switch {
	case err == nil:
		return id, !known, nil
	case errors.Is(err, ErrPodGone):
		return Identity{}, false, refuse(http.StatusForbidden, "%v: the token of a pod that is gone reports nothing", err)
	case errors.Is(err, ErrUnauthenticated):
		return Identity{}, false, refuse(http.StatusUnauthorized, "%v; %s", err, tokenHint)
	case errors.As(err, &busy):
		refused := refuse(http.StatusServiceUnavailable, "cannot check the token now: %v; retry after the seconds of Retry-After", busy)
		refused.retryAfter = busy.retryAfter
		return Identity{}, false, refused
	default:
		log.Error(err, "Cannot check a progress report's token")
		return Identity{}, false, refuse(http.StatusServiceUnavailable, "cannot check the token now; retry")
	}
}

// readBody reads a report's body, of at most progress.MaxReportBytes: the
// reader stops one byte past it, so a larger body is never held whole.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *refusal) {
	tooLarge := refuse(http.StatusRequestEntityTooLarge, "the report is larger than %d bytes: send {\"step\": <int>, \"epoch\": <int>, \"checkpoint\": <bool>}", progress.MaxReportBytes)
	if r.ContentLength > progress.MaxReportBytes {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, progress.MaxReportBytes))
	var overflow *http.MaxBytesError
	switch {
	case errors.As(err, &overflow):
		return nil, tooLarge
	case err != nil:
		return nil, refuse(http.StatusBadRequest, "reading the report: %v", err)
	}
	return body, nil
}
