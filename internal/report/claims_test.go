package report

import (
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// jwt is a token shaped like a pod's, for backfill.dev, expiring at exp
// (none when zero); salt tells tokens apart.
func jwt(exp time.Time, salt string) string {
	payload := fmt.Sprintf(`{"aud":["backfill.dev"],"sub":%q}`, salt)
	if !exp.IsZero() {
		payload = fmt.Sprintf(`{"aud":["backfill.dev"],"sub":%q,"exp":%d}`, salt, exp.Unix())
	}
	return jwtOf(payload)
}

// jwtOf is a JWT of the claims payload, with a signature of no worth.
func jwtOf(payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(payload)) + ".c2ln"
}

func TestClaims(t *testing.T) {
	cases := map[string]struct {
		token  string
		want   claims
		wantOK bool
	}{
		"a pod's token":       {token: jwt(t0, "x"), want: claims{exp: t0, aud: []string{"backfill.dev"}}, wantOK: true},
		"no exp":              {token: jwt(time.Time{}, "x"), want: claims{aud: []string{"backfill.dev"}}, wantOK: true},
		"one audience":        {token: jwtOf(`{"aud":"backfill.dev"}`), want: claims{aud: []string{"backfill.dev"}}, wantOK: true},
		"no audience":         {token: jwtOf(`{"sub":"x"}`), wantOK: true},
		"an audience of junk": {token: jwtOf(`{"aud":7}`), wantOK: true},
		"empty":               {token: ""},
		"two parts":           {token: "a.b"},
		"not base64":          {token: "a.!!.c"},
		"not an object":       {token: "a." + base64.RawURLEncoding.EncodeToString([]byte("[]")) + ".c"},
		"exp not a number":    {token: jwtOf(`{"exp":"soon"}`)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := claimsOf(tc.token)
			if ok != tc.wantOK {
				t.Fatalf("claims of %q known: %v, want %v", tc.token, ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(claims{})); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	if exp, ok := expiry(jwt(t0, "x")); !ok || !exp.Equal(t0) {
		t.Errorf("expiry %v %v, want %v", exp, ok, t0)
	}
	for _, token := range []string{"", "a.b", "a.!!.c", jwt(time.Time{}, "no exp")} {
		if _, ok := expiry(token); ok {
			t.Errorf("expiry of %q known", token)
		}
	}
}
