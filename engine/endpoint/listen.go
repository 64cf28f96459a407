package endpoint

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
)

// Listen binds addr, over HTTPS when t has a certificate, and returns the
// listener with the URL other nodes reach it at: advertise when set, else
// one made from the bound address (the host name when bound to all
// interfaces, the chosen port when addr asked for port 0).
func Listen(addr, advertise string, t TLS) (net.Listener, string, error) {
	tlsConfig, err := t.ServerConfig()
	if err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	scheme := "http"
	if tlsConfig != nil {
		l, scheme = tls.NewListener(l, tlsConfig), "https"
	}
	url := advertise
	if url == "" {
		url = scheme + "://" + advertisedHost(l.Addr().(*net.TCPAddr))
	}
	return l, url, nil
}

func advertisedHost(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return net.JoinHostPort(host, fmt.Sprint(a.Port))
}
