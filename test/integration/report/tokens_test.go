//go:build integration

package report

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// expiredToken is genuine with its life moved two hours back, signed again
// with the apiserver's own ServiceAccount signing key (envtest keeps it in
// its cert dir): a token the apiserver issued in every respect but that it
// expired an hour ago. The TokenRequest API cannot issue one: its
// shortest life is 10 minutes.
func expiredToken(t *testing.T, genuine string) string {
	t.Helper()
	parts := strings.Split(genuine, ".")
	if len(parts) != 3 {
		t.Fatalf("the token has %d parts, want a JWS of 3", len(parts))
	}
	header, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	var alg struct {
		Alg string `json:"alg"`
	}
	if err := json.Unmarshal(header, &alg); err != nil || alg.Alg != "ES256" {
		t.Fatalf("the token is signed with %q (%v), want ES256 (envtest's P-256 key)", alg.Alg, err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	back := time.Now().Add(-2 * time.Hour)
	claims["iat"], claims["nbf"], claims["exp"] = back.Unix(), back.Unix(), back.Add(time.Hour).Unix()
	payload, err = json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	signed := parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload)
	return signed + "." + es256(t, signingKey(t), signed)
}

// signingKey is the apiserver's ServiceAccount signing key.
func signingKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(apiServer.Env.ControlPlane.GetAPIServer().CertDir, "sa-signer.key"))
	if err != nil {
		t.Fatalf("Reading envtest's ServiceAccount signing key: %v", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("the signing key is not PEM")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("the signing key is a %T, want ECDSA", key)
	}
	return ec
}

// es256 is the JWS ES256 signature of data: r and s, 32 bytes each.
func es256(t *testing.T, key *ecdsa.PrivateKey, data string) string {
	t.Helper()
	digest := sha256.Sum256([]byte(data))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return base64.RawURLEncoding.EncodeToString(sig)
}
