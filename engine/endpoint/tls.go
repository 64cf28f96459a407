package endpoint

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLS configures HTTPS on a node's endpoint and how this node checks the
// endpoints of the others. The cluster token travels in every dispatch
// request, so a cluster whose nodes talk across an untrusted network
// should use it.
type TLS struct {
	CertFile, KeyFile string // this node's certificate and key; empty: plain HTTP
	CAFile            string // CA bundle to verify other nodes; empty: the system's roots
}

// ServerConfig loads this node's certificate; nil without one, for plain
// HTTP.
func (t TLS) ServerConfig() (*tls.Config, error) {
	if t.CertFile == "" && t.KeyFile == "" {
		return nil, nil
	}
	if t.CertFile == "" || t.KeyFile == "" {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot load the TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// ClientConfig is how offers and heartbeats verify other nodes.
func (t TLS) ClientConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CAFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(t.CAFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read --tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", t.CAFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}
