package dovetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is a throw-away certificate authority for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(name string) (*testCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"dovetest"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// issueServer signs a server certificate for 127.0.0.1, ::1 and localhost
// and returns the certificate and its private key in PEM.
func (ca *testCA) issueServer() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano() + 1),
		Subject:      pkix.Name{CommonName: "127.0.0.1", Organization: []string{"dovetest"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}

// writeTLSFiles creates a CA and a server certificate in dir and returns
// the paths of the certificate and key files and the CA in PEM.
func writeTLSFiles(dir string) (certPath, keyPath string, caPEM []byte, err error) {
	ca, err := newTestCA("dovetest CA")
	if err != nil {
		return "", "", nil, fmt.Errorf("create CA: %w", err)
	}
	certPEM, keyPEM, err := ca.issueServer()
	if err != nil {
		return "", "", nil, fmt.Errorf("issue server certificate: %w", err)
	}
	certPath, keyPath = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca.pem, 0o644); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(certPath, certPEM, 0o644); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return "", "", nil, err
	}
	return certPath, keyPath, ca.pem, nil
}

// CAPool returns a pool holding only the CA that signed the server's
// certificate. It fails the test when the server runs without TLS.
func (s *Server) CAPool(t testing.TB) *x509.CertPool {
	t.Helper()
	if len(s.CAPEM) == 0 {
		t.Fatal("dovetest: server started without TLS: use StartWith(t, Options{TLS: true})")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CAPEM) {
		t.Fatal("dovetest: CA certificate does not parse")
	}
	return pool
}

// ClientTLSConfig returns a client configuration that trusts only the
// server's CA and verifies the certificate for 127.0.0.1.
func (s *Server) ClientTLSConfig(t testing.TB) *tls.Config {
	t.Helper()
	return &tls.Config{RootCAs: s.CAPool(t), ServerName: s.Host, MinVersion: tls.VersionTLS12}
}

// UnrelatedCAPool returns a pool with a freshly made CA that signed
// nothing the server presents, for tests that a wrong CA is refused.
func UnrelatedCAPool(t testing.TB) *x509.CertPool {
	t.Helper()
	ca, err := newTestCA("unrelated CA")
	if err != nil {
		t.Fatalf("dovetest: unrelated CA: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}
