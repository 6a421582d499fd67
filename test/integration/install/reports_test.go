//go:build integration

package install

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// The chart's report certificate is signed by the CA beside it and names
// the Service the manager's --report-url points at.
func TestReportCertificate(t *testing.T) {
	var data map[string]any
	for _, o := range decode(t, helmTemplate(t, valueSets["default"])) {
		if o.GetKind() == "Secret" && o.GetName() == "backfill-manager-reports-tls" {
			data, _ = o.Object["data"].(map[string]any)
		}
	}
	if data == nil {
		t.Fatal("The chart renders no Secret backfill-manager-reports-tls")
	}
	parse := func(key string) *x509.Certificate {
		t.Helper()
		raw, err := base64.StdEncoding.DecodeString(data[key].(string))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		block, _ := pem.Decode(raw)
		if block == nil {
			t.Fatalf("%s holds no PEM", key)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return cert
	}
	roots := x509.NewCertPool()
	roots.AddCert(parse("ca.crt"))
	opts := x509.VerifyOptions{Roots: roots, DNSName: "backfill-reports.backfill-system.svc", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := parse("tls.crt").Verify(opts); err != nil {
		t.Errorf("The serving certificate does not verify for %s: %v", opts.DNSName, err)
	}
	if data["tls.key"] == nil {
		t.Error("The Secret has no tls.key")
	}
}

// With reports.certManager the chart renders no Secret of its own:
// cert-manager issues the serving certificate into the Secret the
// Deployment mounts (and waits for), for the name of --report-url, signed
// by the chart's CA chain (a self-signed Issuer, a CA Certificate that
// never rotates its key, a CA Issuer) or by the issuer named.
func TestReportCertificateFromCertManager(t *testing.T) {
	tests := map[string]struct {
		values     string
		wantIssuer map[string]any
		wantChain  bool
	}{
		"the chart's CA": {values: "cert-manager.yaml", wantChain: true,
			wantIssuer: map[string]any{"name": "backfill-reports-ca", "kind": "Issuer", "group": "cert-manager.io"}},
		"an existing ClusterIssuer": {values: "cert-manager-issuer.yaml",
			wantIssuer: map[string]any{"name": "internal-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, helmTemplate(t, valueSet{release: "backfill", values: tc.values}))
			byName := map[string]*unstructured.Unstructured{}
			for _, o := range objs {
				byName[o.GetKind()+" "+o.GetName()] = o
				if o.GetKind() == "Secret" {
					t.Errorf("The chart renders Secret %s beside cert-manager's", o.GetName())
				}
			}
			cert := byName["Certificate backfill-manager-reports"]
			if cert == nil {
				t.Fatalf("No Certificate backfill-manager-reports rendered: %v", keysOf(byName))
			}
			secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
			volume, optional := reportVolume(t, deploymentOf(t, objs))
			if secret != volume || optional {
				t.Errorf("The Certificate fills Secret %q, the Deployment mounts %q (optional %v): want the same Secret, not optional", secret, volume, optional)
			}
			host := reportHost(t, objs)
			dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
			if !slices.Contains(dnsNames, host) {
				t.Errorf("The Certificate names %v, not %s of --report-url", dnsNames, host)
			}
			issuer, _, _ := unstructured.NestedMap(cert.Object, "spec", "issuerRef")
			if diff := cmp.Diff(tc.wantIssuer, issuer); diff != "" {
				t.Errorf("The Certificate's issuerRef (-want +got):\n%s", diff)
			}
			chain := []string{"Issuer backfill-reports-selfsigned", "Certificate backfill-reports-ca", "Issuer backfill-reports-ca"}
			for _, key := range chain {
				if (byName[key] != nil) != tc.wantChain {
					t.Errorf("%s rendered: %v, want %v", key, byName[key] != nil, tc.wantChain)
				}
			}
			if !tc.wantChain {
				return
			}
			ca := byName["Certificate backfill-reports-ca"].Object
			caSecret, _, _ := unstructured.NestedString(ca, "spec", "secretName")
			caIssuer, _, _ := unstructured.NestedString(byName["Issuer backfill-reports-ca"].Object, "spec", "ca", "secretName")
			signer, _, _ := unstructured.NestedString(ca, "spec", "issuerRef", "name")
			isCA, _, _ := unstructured.NestedBool(ca, "spec", "isCA")
			rotation, _, _ := unstructured.NestedString(ca, "spec", "privateKey", "rotationPolicy")
			if caSecret != caIssuer || signer != "backfill-reports-selfsigned" || !isCA || rotation != "Never" {
				t.Errorf("The CA Certificate (secret %q, issuer %q, isCA %v, key rotation %q) and the CA Issuer (secret %q) do not chain: want a CA signed by the self-signed Issuer whose key never rotates, in the Secret the CA Issuer reads",
					caSecret, signer, isCA, rotation, caIssuer)
			}
		})
	}
}

// reports.existingSecret names the Secret the Deployment mounts, and the
// chart makes none.
func TestReportCertificateFromExistingSecret(t *testing.T) {
	objs := decode(t, helmTemplate(t, valueSets["default"], "--set", "reports.existingSecret=my-reports-tls"))
	for _, o := range objs {
		if o.GetKind() == "Secret" || o.GetKind() == "Certificate" || o.GetKind() == "Issuer" {
			t.Errorf("With reports.existingSecret the chart renders %s %s", o.GetKind(), o.GetName())
		}
	}
	if volume, optional := reportVolume(t, deploymentOf(t, objs)); volume != "my-reports-tls" || !optional {
		t.Errorf("The Deployment mounts Secret %q (optional %v), want my-reports-tls, optional", volume, optional)
	}
}

// Ways of giving the report certificate that contradict each other are
// refused with one line that says what to keep.
func TestChartRefusesContradictoryCertificates(t *testing.T) {
	tests := map[string]struct {
		set  []string
		want string
	}{
		"existing Secret and cert-manager": {
			set:  []string{"reports.existingSecret=mine", "reports.certManager.enabled=true"},
			want: "reports.existingSecret=mine and reports.certManager.enabled=true both give the report endpoint's certificate",
		},
		"cert-manager without reports": {
			set:  []string{"reports.enabled=false", "reports.certManager.enabled=true"},
			want: "reports.certManager.enabled=true with reports.enabled=false: nothing would use the certificate",
		},
		"existing Secret without reports": {
			set:  []string{"reports.enabled=false", "reports.existingSecret=mine"},
			want: "reports.existingSecret=mine with reports.enabled=false: nothing would mount the Secret",
		},
		"issuer without cert-manager": {
			set:  []string{"reports.certManager.issuerRef.name=internal-ca"},
			want: "reports.certManager.issuerRef.name=internal-ca with reports.certManager.enabled=false",
		},
		"ClusterIssuer without a name": {
			set:  []string{"reports.certManager.enabled=true", "reports.certManager.issuerRef.kind=ClusterIssuer"},
			want: "reports.certManager.issuerRef has kind ClusterIssuer and group cert-manager.io but no name",
		},
		"certificate that never lasts": {
			set:  []string{"reports.certManager.enabled=true", "reports.certManager.duration=0h"},
			want: "at '/reports/certManager/duration'",
		},
		"empty extra user": {
			set:  []string{"admissionPolicy.extraUsers[0]="},
			want: "at '/admissionPolicy/extraUsers/0'",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { checkRefused(t, tc.set, tc.want) })
	}
}

// reportVolume is the Secret of the Deployment's report-tls volume and
// whether it is optional.
func reportVolume(t *testing.T, deploy *appsv1.Deployment) (string, bool) {
	t.Helper()
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		if v.Name == "report-tls" && v.Secret != nil {
			return v.Secret.SecretName, ptr.Deref(v.Secret.Optional, false)
		}
	}
	t.Fatal("The Deployment has no report-tls Secret volume")
	return "", false
}

// reportHost is the host of the manager's --report-url.
func reportHost(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	for _, arg := range managerArgs(t, objs) {
		if raw, ok := strings.CutPrefix(arg, "--report-url="); ok {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatalf("--report-url=%s: %v", raw, err)
			}
			return u.Hostname()
		}
	}
	t.Fatal("The manager has no --report-url")
	return ""
}
