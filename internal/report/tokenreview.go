package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What a pod-bound ServiceAccount token's user carries, as
// k8s.io/apiserver/pkg/authentication/serviceaccount names it (PodNameKey,
// PodUIDKey, ServiceAccountUsernamePrefix): copied rather than imported,
// as nothing else here needs k8s.io/apiserver.
const (
	podNameKey           = "authentication.kubernetes.io/pod-name"
	podUIDKey            = "authentication.kubernetes.io/pod-uid"
	serviceAccountPrefix = "system:serviceaccount:"
)

// What the apiserver's ServiceAccount token validator
// (kubernetes pkg/serviceaccount/claims.go) says of a token whose bound
// pod is gone or terminating, and of one whose pod was recreated under the
// same name. A TokenReview passes it on in status.error, e.g.
// "[invalid bearer token, service account token has been invalidated]";
// it is the only way to tell these tokens from bad ones.
var podGoneErrors = []string{
	"service account token has been invalidated",
	"does not match service account pod ref claim",
}

// reviewTimeout bounds one TokenReview.
const reviewTimeout = 10 * time.Second

// TokenReviewer authenticates tokens with the apiserver's TokenReview API
// for one audience: the manager needs `tokenreviews create`, training pods
// nothing.
type TokenReviewer struct {
	client   client.Client
	audience string
	limiter  *reviewLimiter
}

// NewTokenReviewer reviews tokens for audience through c, whose writes go
// to the apiserver (the manager's client), within limits at the time of
// clk.
func NewTokenReviewer(c client.Client, audience string, limits ReviewLimits, clk clock.PassiveClock) *TokenReviewer {
	return &TokenReviewer{client: c, audience: audience, limiter: newReviewLimiter(limits, clk)}
}

// Authenticate implements Authenticator. A token that a review could only
// refuse is refused without one; the others are reviewed within the
// limits, or refused with a busyError.
func (t *TokenReviewer) Authenticate(ctx context.Context, token string) (Identity, error) {
	if err := t.prefilter(token); err != nil {
		return Identity{}, err
	}
	release, err := t.limiter.acquire()
	if err != nil {
		return Identity{}, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{t.audience}}}
	if err := t.client.Create(ctx, review); err != nil {
		return Identity{}, fmt.Errorf("creating a TokenReview (the manager needs `create tokenreviews.authentication.k8s.io`): %w", err)
	}
	st := review.Status
	if !st.Authenticated {
		return Identity{}, reviewRefusal(st.Error)
	}
	// An authenticator that ignores audiences answers with none: the
	// token would then be good for the apiserver, not for us.
	if !slices.Contains(st.Audiences, t.audience) {
		return Identity{}, fmt.Errorf("%w: the token is for audiences %q, not %q", ErrUnauthenticated, st.Audiences, t.audience)
	}
	return identityOf(st.User)
}

// prefilter refuses a token that cannot be for the audience. Only
// ServiceAccount tokens name a pod, and they are JWTs whose aud claim the
// review checks: a token that is no JWT, or whose aud lacks the audience,
// would be refused by the review, so it costs none.
func (t *TokenReviewer) prefilter(token string) error {
	c, ok := claimsOf(token)
	switch {
	case !ok:
		return fmt.Errorf("%w: it is not a ServiceAccount token (a JWT)", ErrUnauthenticated)
	case !slices.Contains(c.aud, t.audience):
		return fmt.Errorf("%w: the token is for audiences %q, not %q", ErrUnauthenticated, c.aud, t.audience)
	}
	return nil
}

// reviewRefusal is the error of a token the review did not authenticate.
func reviewRefusal(why string) error {
	for _, s := range podGoneErrors {
		if strings.Contains(why, s) {
			return fmt.Errorf("%w: %s", ErrPodGone, why)
		}
	}
	if why == "" {
		why = "the TokenReview did not authenticate it"
	}
	return fmt.Errorf("%w: %s", ErrUnauthenticated, why)
}

// identityOf reads the ServiceAccount and the bound pod of a reviewed user.
func identityOf(u authenticationv1.UserInfo) (Identity, error) {
	var id Identity
	if rest, ok := strings.CutPrefix(u.Username, serviceAccountPrefix); ok {
		id.Namespace, id.ServiceAccount, _ = strings.Cut(rest, ":")
	}
	name, uid := u.Extra[podNameKey], u.Extra[podUIDKey]
	if len(name) == 0 && len(uid) == 0 {
		return id, nil
	}
	if len(name) != 1 || len(uid) != 1 || name[0] == "" || uid[0] == "" || id.Namespace == "" {
		return Identity{}, fmt.Errorf("%w: the reviewed user %q has a malformed pod binding", ErrUnauthenticated, u.Username)
	}
	id.PodName, id.PodUID = name[0], types.UID(uid[0])
	return id, nil
}
