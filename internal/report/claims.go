package report

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// claims are what a JWT says of itself, read without verifying it: only
// the TokenReview verifies a token. They serve to refuse at no cost a
// token that a review could only refuse, and to keep the token cache from
// trusting a token past its expiry.
type claims struct {
	// exp is the token's expiry; zero when it has none.
	exp time.Time
	// aud are the audiences the token is for.
	aud []string
}

// claimsOf reads the claims of a JWT; false when token is no JWT.
func claimsOf(token string) (claims, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return claims{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return claims{}, false
	}
	var raw struct {
		Exp *int64          `json:"exp"`
		Aud json.RawMessage `json:"aud"`
	}
	if err := json.Unmarshal(payload, &raw); err != nil {
		return claims{}, false
	}
	var c claims
	if raw.Exp != nil {
		c.exp = time.Unix(*raw.Exp, 0)
	}
	// RFC 7519: aud is one string or an array of them.
	var one string
	if json.Unmarshal(raw.Aud, &one) == nil {
		c.aud = []string{one}
	} else if json.Unmarshal(raw.Aud, &c.aud) != nil {
		c.aud = nil
	}
	return c, true
}

// expiry is the exp claim of a JWT.
func expiry(token string) (time.Time, bool) {
	c, ok := claimsOf(token)
	return c.exp, ok && !c.exp.IsZero()
}
