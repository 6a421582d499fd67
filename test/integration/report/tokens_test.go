//go:build integration

package report

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/test/framework"
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

// TestTokensOfOtherPods: genuine tokens of pods that are not running
// replicas of the job reported for change nothing: a replica of a job of
// the same name in another namespace, a replica that is terminating (its
// token trusted from an earlier report), and a replica's token for the
// apiserver's own audience rather than backfill.dev.
func TestTokensOfOtherPods(t *testing.T) {
	ctx := context.Background()
	ns, elsewhere := newNamespace(t), newNamespace(t)
	job, pods := runningJob(t, ns, "mnist", 1)
	_, strangers := runningJob(t, elsewhere, "mnist", 1)
	token := podToken(t, pods[0], tfjob.ReportAudience)
	wantReport(t, ns, "mnist", bearer(token), `{"step": 10}`, http.StatusNoContent, "")
	job = waitForJob(t, job, "step 10", func(st kubeflowv1.JobStatus) bool { return st.Progress != nil && st.Progress.Step == 10 })

	const refused = `{"step": 7777, "checkpoint": true}`
	wantReport(t, ns, "mnist", bearer(podToken(t, strangers[0], tfjob.ReportAudience)), refused, http.StatusForbidden, "not a replica of TFJob "+ns+"/mnist")

	apiToken := podToken(t, pods[0], "")
	if c, _ := jwtClaims(t, apiToken)["aud"].([]any); len(c) == 0 || slices.Contains(c, any(tfjob.ReportAudience)) {
		t.Fatalf("a token for the apiserver's audience has aud %v", c)
	}
	wantReport(t, ns, "mnist", bearer(apiToken), refused, http.StatusUnauthorized, "not valid for backfill.dev")

	// A finalizer keeps the deleted pod terminating.
	const hold = "test.backfill.dev/hold"
	pod := pods[0]
	patchFinalizers(t, pod, `["`+hold+`"]`)
	t.Cleanup(func() { patchFinalizers(t, pod, `null`) })
	if err := apiServer.Client.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, "the terminating pod's report to be refused", func(context.Context) (bool, error) {
		status, why := post(t, ns, "mnist", bearer(token), `{"step": 10}`)
		if status == http.StatusForbidden && !strings.Contains(why, "terminating") && !strings.Contains(why, "invalidated") {
			return false, fmt.Errorf("403 %q, want it to say the pod is terminating", why)
		}
		return status == http.StatusForbidden, nil
	})
	status, why := post(t, ns, "mnist", bearer(token), refused)
	if status != http.StatusForbidden {
		t.Errorf("a terminating pod's report: %d %q, want 403", status, why)
	}
	framework.Consistently(t, "a refused report reached the status", quiet, func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job)
		return err == nil && !cmp.Equal(got.Status.Progress, job.Status.Progress), err
	})
}

// jwtClaims are the claims of a token, unverified.
func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("the token has %d parts, want a JWS of 3", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// patchFinalizers sets the pod's finalizers to the JSON list (or null).
func patchFinalizers(t *testing.T, pod *corev1.Pod, finalizers string) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":`+finalizers+`}}`))
	if err := apiServer.Client.Patch(context.Background(), pod.DeepCopy(), patch); client.IgnoreNotFound(err) != nil {
		t.Fatalf("Setting the finalizers of pod %s: %v", pod.Name, err)
	}
}
