package endpoint

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
	"net/http/httptest"
	"os"
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

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestEndpointOverTLS(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	settings := TLS{CertFile: cert, KeyFile: key, CAFile: cert}
	l, url, err := Listen("127.0.0.1:0", "", settings)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("advertised URL %q, want https", url)
	}
	a := &scriptedAcceptor{accepting: true}
	srv := &http.Server{Handler: NewHandler(HandlerConfig{Token: testToken, Acceptor: a}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	trusting, err := settings.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	target := &engine.Node{URL: url}
	if err := NewClient(testToken, 5*time.Second, trusting).Heartbeat(context.Background(), target); err != nil {
		t.Fatalf("heartbeat over TLS with the CA: %v", err)
	}
	if res := NewClient(testToken, 5*time.Second, trusting).Offer(context.Background(), target, testOffer); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer over TLS: %+v, want accepted", res)
	}
	if err := NewClient(testToken, 5*time.Second, nil).Heartbeat(context.Background(), target); err == nil {
		t.Fatal("a client that does not trust the node's certificate got through")
	}
}

func TestListenAdvertisesTheBoundAddress(t *testing.T) {
	t.Parallel()
	l, url, err := Listen("127.0.0.1:0", "", TLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if want := "http://" + l.Addr().String(); url != want {
		t.Errorf("URL %q, want %q", url, want)
	}
	l2, url, err := Listen("127.0.0.1:0", "http://node1:7420", TLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if url != "http://node1:7420" {
		t.Errorf("URL %q, want the advertised one", url)
	}
	if _, _, err := Listen(l.Addr().String(), "", TLS{}); err == nil {
		t.Error("listening on a taken port succeeded")
	}
}

func TestTLSSettingsAreChecked(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	for _, bad := range []TLS{
		{CertFile: cert},
		{KeyFile: key},
		{CertFile: key, KeyFile: cert},
	} {
		if _, err := bad.ServerConfig(); err == nil {
			t.Errorf("server TLS settings %+v accepted", bad)
		}
	}
	for _, bad := range []TLS{
		{CAFile: filepath.Join(t.TempDir(), "missing.pem")},
		{CAFile: key},
	} {
		if _, err := bad.ClientConfig(); err == nil {
			t.Errorf("client TLS settings %+v accepted", bad)
		}
	}
	if c, err := (TLS{}).ServerConfig(); c != nil || err != nil {
		t.Errorf("no certificate: %v, %v; want plain HTTP", c, err)
	}
}

// A node builds its offer and heartbeat clients from one TLS config, and
// each transport writes its protocols into its config on first use: the
// caller's config must stay as given, or the two clients race on it.
func TestClientLeavesTheCallersTLSConfigAlone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	cfg, err := TLS{}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := NewClient("token", 5*time.Second, cfg).Heartbeat(context.Background(), &engine.Node{Name: "n", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	if len(cfg.NextProtos) != 0 {
		t.Fatalf("the client changed the config it was given: NextProtos %q", cfg.NextProtos)
	}
}
