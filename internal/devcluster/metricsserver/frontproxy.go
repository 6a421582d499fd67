package metricsserver

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"path/filepath"

	"github.com/backfill-dev/backfill/internal/devcluster/pki"
)

// FrontProxyClientName is the common name of the apiserver's front-proxy
// client certificate. The apiserver publishes it as the only allowed name
// (--requestheader-allowed-names), so aggregated servers trust user headers
// from that certificate alone, not from any other the CA might sign.
const FrontProxyClientName = "front-proxy-client"

// FrontProxy is where the credentials lie with which the kube-apiserver's
// aggregation layer proxies requests to aggregated API servers: a CA that
// those servers trust for the purpose, and the client certificate it signed.
type FrontProxy struct {
	CAFile, ClientCertFile, ClientKeyFile string
}

// FrontProxyIn names the front-proxy files in dir, written or not.
func FrontProxyIn(dir string) FrontProxy {
	return FrontProxy{
		CAFile:         filepath.Join(dir, "front-proxy-ca.crt"),
		ClientCertFile: filepath.Join(dir, "front-proxy-client.crt"),
		ClientKeyFile:  filepath.Join(dir, "front-proxy-client.key"),
	}
}

// WriteFrontProxy writes a new front-proxy CA and client certificate into
// dir. The CA's key is not kept: nothing else is ever signed with it.
func WriteFrontProxy(dir string) (FrontProxy, error) {
	fp := FrontProxyIn(dir)
	ca, err := pki.NewCA("backfill-front-proxy-ca")
	if err != nil {
		return fp, err
	}
	client, err := ca.Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: FrontProxyClientName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return fp, err
	}
	if err := ca.WriteCert(fp.CAFile, ""); err != nil {
		return fp, err
	}
	return fp, client.WriteCert(fp.ClientCertFile, fp.ClientKeyFile)
}

// APIServerFlags are the kube-apiserver flags that proxy with these
// credentials. The apiserver also publishes the requestheader settings in
// kube-system/extension-apiserver-authentication, where aggregated servers
// (metrics-server) read them.
func (fp FrontProxy) APIServerFlags() []string {
	return []string{
		"--requestheader-client-ca-file=" + fp.CAFile,
		"--requestheader-allowed-names=" + FrontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + fp.ClientCertFile,
		"--proxy-client-key-file=" + fp.ClientKeyFile,
	}
}
