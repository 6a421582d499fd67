package manager

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
)

// The controllers' events go out through a client of their own. The
// manager's config leaves the content type unset, so that
// controller-runtime's client and caches choose per type: protobuf for
// Kubernetes' own, JSON for TFJobs. Setting protobuf in that config would
// fail every TFJob write (a TFJob has no protobuf encoding), and the event
// recorder controller-runtime builds from it sends its events as JSON.
// Events are Kubernetes' own type, so this client speaks protobuf, which
// is cheaper to encode here and to decode in the apiserver.

// eventRecorders hands out the controllers' event recorders, all on one
// broadcaster.
type eventRecorders struct {
	broadcaster events.EventBroadcaster
	scheme      *runtime.Scheme
	stopLogging func()
	cancel      context.CancelFunc
}

// newEventRecorders starts a broadcaster that sends events through an
// events.k8s.io/v1 client speaking protobuf, on httpClient (the manager's
// connections), and logs each event at debug level, as
// controller-runtime's recorder does. stop ends it.
func newEventRecorders(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, logger logr.Logger) (*eventRecorders, error) {
	c, err := eventsv1client.NewForConfigAndClient(protobufConfig(cfg), httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the events client: %w", err)
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: c})
	// Not the manager's context: the events of the last passes, sent as
	// the controllers stop, still go out until stop.
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("starting to record events: %w", err)
	}
	stopLogging, err := b.StartLogging(logger.V(1))
	if err != nil {
		b.Shutdown()
		cancel()
		return nil, fmt.Errorf("starting to log events: %w", err)
	}
	return &eventRecorders{broadcaster: b, scheme: scheme, stopLogging: stopLogging, cancel: cancel}, nil
}

// protobufConfig is cfg asking for and sending protobuf, with JSON
// accepted back; only for clients of Kubernetes' own types.
func protobufConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return cfg
}

// recorder is the event recorder of the named controller.
func (e *eventRecorders) recorder(name string) events.EventRecorder {
	return e.broadcaster.NewRecorder(e.scheme, name)
}

// stop ends the recording, once the controllers have stopped.
func (e *eventRecorders) stop() {
	e.stopLogging()
	e.broadcaster.Shutdown()
	e.cancel()
}
