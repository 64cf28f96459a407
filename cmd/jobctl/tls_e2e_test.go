package main_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A node serving HTTPS under a certificate of its own hands its jobs that
// certificate, so 'jobctl progress' and the other in-job commands reach
// it without a public CA.
func TestAJobReachesItsNodeOverHTTPS(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	cert, key := selfSignedFiles(t)
	c.serve("n1", "--exec", "--tls-cert", cert, "--tls-key", key, "--tls-ca", cert)
	script := `set -e
"$1" progress 40 half
echo "JOBCTL_URL=$JOBCTL_URL JOBCTL_CA_FILE=$JOBCTL_CA_FILE"`
	id := c.submit("--", "sh", "-c", script, "sh", binary)
	j := c.waitStatus(id, "FINISHED", 60*time.Second)
	log := c.ok("logs", id)
	if j.Progress != 40 {
		t.Errorf("progress %d, want the 40 the job reported over HTTPS:\n%s", j.Progress, log)
	}
	if !strings.Contains(log, "JOBCTL_URL=https://") || !strings.Contains(log, "JOBCTL_CA_FILE="+cert+"\n") {
		t.Errorf("the job's log lacks its node's https address or certificate %s:\n%s", cert, log)
	}
}

// selfSignedFiles writes a certificate for 127.0.0.1 that is its own CA,
// and its key, under an absolute path.
func selfSignedFiles(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "jobctl test node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
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
	for path, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}
