package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// selfSigned writes a certificate for 127.0.0.1 that is its own CA.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "jobctl test node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "node.crt"), filepath.Join(dir, "node.key")
	writeFile(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})))
	return certFile, keyFile
}

func TestEndpointOverTLS(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	n, _ := testNode(t, func(c *Config) {
		c.Listen = "127.0.0.1:0"
		c.TLS = TLS{CertFile: cert, KeyFile: key, CAFile: cert}
	})
	if err := n.Listen(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(n.URL(), "https://127.0.0.1:") {
		t.Fatalf("advertised URL %q, want https", n.URL())
	}
	srv := &http.Server{Handler: n.Handler(), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(n.listener) }()
	t.Cleanup(func() { _ = srv.Close() })

	trusting, err := n.cfg.TLS.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	target := &engine.Node{URL: n.URL()}
	if err := NewClient("secret-token", 5*time.Second, trusting).Heartbeat(context.Background(), target); err != nil {
		t.Fatalf("heartbeat over TLS with the CA: %v", err)
	}
	if err := NewClient("secret-token", 5*time.Second, nil).Heartbeat(context.Background(), target); err == nil {
		t.Fatal("a client that does not trust the node's certificate got through")
	}
}

func TestTLSSettingsAreChecked(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	for _, bad := range []TLS{
		{CertFile: cert},
		{KeyFile: key},
		{CertFile: key, KeyFile: cert},
		{CAFile: filepath.Join(t.TempDir(), "missing.pem")},
		{CAFile: key},
	} {
		c := Defaults()
		c.TLS = bad
		if err := c.Validate(); err == nil {
			t.Errorf("TLS settings %+v accepted", bad)
		}
	}
}
