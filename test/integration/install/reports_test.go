//go:build integration

package install

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"testing"
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
