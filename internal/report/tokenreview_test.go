package report

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	testclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// reviewer is a TokenReviewer whose apiserver answers with status, or
// fails with err; it keeps the review it was sent.
func reviewer(t *testing.T, status authenticationv1.TokenReviewStatus, err error, sent *authenticationv1.TokenReviewSpec) *TokenReviewer {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			review := obj.(*authenticationv1.TokenReview)
			*sent = review.Spec
			review.Status = status
			return err
		},
	}).Build()
	return NewTokenReviewer(c, "backfill.dev", DefaultReviewLimits(), testclock.NewFakePassiveClock(t0))
}

func podUser(pod, uid string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{
		Username: "system:serviceaccount:ml:default",
		Extra:    map[string]authenticationv1.ExtraValue{podNameKey: {pod}, podUIDKey: {uid}, "authentication.kubernetes.io/node-name": {"n1"}},
	}
}

func TestTokenReviewer(t *testing.T) {
	aud := []string{"backfill.dev"}
	cases := map[string]struct {
		status  authenticationv1.TokenReviewStatus
		err     error
		want    Identity
		wantErr error
	}{
		"a pod's token": {
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: aud, User: podUser("mnist-worker-0", "u1")},
			want:   Identity{Namespace: "ml", ServiceAccount: "default", PodName: "mnist-worker-0", PodUID: "u1"},
		},
		"a ServiceAccount's token, bound to no pod": {
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: aud, User: authenticationv1.UserInfo{Username: "system:serviceaccount:ml:default"}},
			want:   Identity{Namespace: "ml", ServiceAccount: "default"},
		},
		"a user that is no ServiceAccount": {
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: aud, User: authenticationv1.UserInfo{Username: "alice"}},
			want:   Identity{},
		},
		"an audience-unaware authenticator": {
			status:  authenticationv1.TokenReviewStatus{Authenticated: true, User: podUser("mnist-worker-0", "u1")},
			wantErr: ErrUnauthenticated,
		},
		"two pod names": {
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: aud, User: authenticationv1.UserInfo{
				Username: "system:serviceaccount:ml:default", Extra: map[string]authenticationv1.ExtraValue{podNameKey: {"a", "b"}, podUIDKey: {"u"}}}},
			wantErr: ErrUnauthenticated,
		},
		"a pod name without its UID": {
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: aud, User: authenticationv1.UserInfo{
				Username: "system:serviceaccount:ml:default", Extra: map[string]authenticationv1.ExtraValue{podNameKey: {"a"}}}},
			wantErr: ErrUnauthenticated,
		},
		"an expired token": {
			status:  authenticationv1.TokenReviewStatus{Error: "[invalid bearer token, service account token has expired]"},
			wantErr: ErrUnauthenticated,
		},
		"another audience": {
			status:  authenticationv1.TokenReviewStatus{Error: `[invalid bearer token, token audiences ["api"] is invalid for the target audiences ["backfill.dev"]]`},
			wantErr: ErrUnauthenticated,
		},
		"no reason": {wantErr: ErrUnauthenticated},
		"a deleted pod's token": {
			status:  authenticationv1.TokenReviewStatus{Error: "[invalid bearer token, service account token has been invalidated]"},
			wantErr: ErrPodGone,
		},
		"a recreated pod's token": {
			status:  authenticationv1.TokenReviewStatus{Error: "[invalid bearer token, pod UID (u2) does not match service account pod ref claim (u1)]"},
			wantErr: ErrPodGone,
		},
		"the apiserver refuses the review": {err: errors.New("forbidden"), wantErr: errAny},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var sent authenticationv1.TokenReviewSpec
			id, err := reviewer(t, tc.status, tc.err, &sent).Authenticate(context.Background(), theToken)
			if diff := cmp.Diff(authenticationv1.TokenReviewSpec{Token: theToken, Audiences: aud}, sent); diff != "" {
				t.Errorf("review sent (-want +got):\n%s", diff)
			}
			switch {
			case errors.Is(tc.wantErr, errAny):
				if err == nil || errors.Is(err, ErrUnauthenticated) || errors.Is(err, ErrPodGone) {
					t.Errorf("error %v, want a failure to review, not a refusal", err)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("error %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, id); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
		})
	}
}

// errAny stands for an error that is neither refusal.
var errAny = errors.New("any")

// theToken is what TestTokenReviewer reviews: a pod's token in shape.
var theToken = jwt(t0.Add(time.Hour), "the-token")

// TestNoReviewForTokensOfNoUse: a token that is no JWT, or whose aud lacks
// backfill.dev, is refused without a review.
func TestNoReviewForTokensOfNoUse(t *testing.T) {
	cases := map[string]struct{ token, reason string }{
		"no JWT":                   {token: "junk", reason: "not a ServiceAccount token"},
		"a JWT of junk":            {token: "a.b.c", reason: "not a ServiceAccount token"},
		"the apiserver's audience": {token: jwtOf(`{"aud":["https://kubernetes.default.svc.cluster.local"]}`), reason: `for audiences ["https://kubernetes.default.svc.cluster.local"], not "backfill.dev"`},
		"no audience":              {token: jwtOf(`{"sub":"x"}`), reason: "for audiences [], not"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var sent authenticationv1.TokenReviewSpec
			ok := authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"backfill.dev"}, User: podUser("p", "u")}
			_, err := reviewer(t, ok, nil, &sent).Authenticate(context.Background(), tc.token)
			if !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %v, want ErrUnauthenticated saying %q", err, tc.reason)
			}
			if sent.Token != "" {
				t.Error("the token was reviewed")
			}
		})
	}
}
