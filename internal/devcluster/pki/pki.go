// Package pki makes the certificates of the local cluster's servers: a
// certificate authority per server and the certificates it signs, made
// anew at every start.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"time"
)

// certValidity is how long the certificates here are valid: far longer
// than a local cluster or a suite lives. They are made anew at every start.
const certValidity = 365 * 24 * time.Hour

// KeyPair is a certificate and its private key.
type KeyPair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a self-signed certificate authority.
func NewCA(commonName string) (*KeyPair, error) {
	return sign(nil, &x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	})
}

// Issue makes a certificate of tmpl signed by ca.
func (ca *KeyPair) Issue(tmpl *x509.Certificate) (*KeyPair, error) {
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	return sign(ca, tmpl)
}

// sign fills in tmpl's key, serial and validity and signs it with parent,
// or with itself when parent is nil.
func sign(parent *KeyPair, tmpl *x509.Certificate) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating a key for %s: %w", tmpl.Subject.CommonName, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("choosing a serial number: %w", err)
	}
	tmpl.SerialNumber = serial
	// An hour of slack for clocks that disagree.
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(certValidity)
	signer, signerCert := key, tmpl
	if parent != nil {
		signer, signerCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("signing the certificate of %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &KeyPair{cert: cert, key: key}, nil
}

// CertPEM is the certificate, PEM-encoded.
func (kp *KeyPair) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kp.cert.Raw})
}

// WriteCert writes the certificate to certFile and, unless keyFile is
// empty, its key to keyFile (readable only by us).
func (kp *KeyPair) WriteCert(certFile, keyFile string) error {
	if err := os.WriteFile(certFile, kp.CertPEM(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", certFile, err)
	}
	if keyFile == "" {
		return nil
	}
	der, err := x509.MarshalECPrivateKey(kp.key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", keyFile, err)
	}
	return nil
}
