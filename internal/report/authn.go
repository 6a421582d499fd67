package report

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Identity is who a token speaks for.
type Identity struct {
	// Namespace and ServiceAccount name the token's ServiceAccount; empty
	// for a user that is not one.
	Namespace, ServiceAccount string
	// PodName and PodUID name the pod the token is bound to; empty for a
	// token bound to no pod.
	PodName string
	PodUID  types.UID
}

// Authenticator checks a bearer token for the report audience.
type Authenticator interface {
	// Authenticate returns who the token speaks for; an error wrapping
	// ErrUnauthenticated or ErrPodGone when the token is refused for good,
	// any other error when it could not be checked (a *busyError when
	// the review limits said to retry later).
	Authenticate(ctx context.Context, token string) (Identity, error)
}

var (
	// ErrUnauthenticated refuses a token that is malformed, expired, or
	// for another audience.
	ErrUnauthenticated = errors.New("the token is not valid for backfill.dev")
	// ErrPodGone refuses a token whose pod no longer exists or was
	// recreated: the token was good, its pod is not.
	ErrPodGone = errors.New("the pod the token is bound to is gone")
)

// The token the operator projects is in this file of the pod; the
// reasons below point training code at it.
const tokenHint = "send the pod's token (the file /var/run/secrets/backfill.dev/token) as `Authorization: Bearer <token>`"

// bearerToken is the token of an `Authorization: Bearer <token>` header.
func bearerToken(r *http.Request) (string, *refusal) {
	h := r.Header.Values("Authorization")
	switch {
	case len(h) == 0:
		return "", refuse(http.StatusUnauthorized, "no token: %s", tokenHint)
	case len(h) > 1:
		return "", refuse(http.StatusUnauthorized, "more than one Authorization header: %s", tokenHint)
	}
	scheme, token, ok := strings.Cut(h[0], " ")
	// The scheme is case-insensitive (RFC 9110); a token has no spaces.
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", refuse(http.StatusUnauthorized, "malformed Authorization header: %s", tokenHint)
	}
	return token, nil
}
