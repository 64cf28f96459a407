package main_test

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// dbProxy is a TCP proxy in front of a database that a test can cut: Cut
// closes every connection through it and refuses new ones until Restore,
// as a partition or a database outage would look to the nodes behind it.
type dbProxy struct {
	t      *testing.T
	target string
	ln     net.Listener

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

// newDBProxy listens on a free loopback port and forwards to target
// (host:port) until the test ends.
func newDBProxy(t *testing.T, target string) *dbProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{t: t, target: target, ln: ln, conns: map[net.Conn]bool{}}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *dbProxy) Addr() string { return p.ln.Addr().String() }

// DSN is dsn with its host:port replaced by the proxy's.
func (p *dbProxy) DSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		p.t.Fatalf("proxy: %v", err)
	}
	u.Host = p.Addr()
	return u.String()
}

// Cut drops every connection and refuses new ones.
func (p *dbProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore lets connections through again.
func (p *dbProxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

func (p *dbProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(in)
	}
}

func (p *dbProxy) forward(in net.Conn) {
	if !p.track(in) {
		in.Close()
		return
	}
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		in.Close()
		return
	}
	if !p.track(out) {
		in.Close()
		out.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

// track registers a connection unless the proxy is cut.
func (p *dbProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = true
	return true
}

// A cut proxy refuses the database to the commands behind it, and a
// restored one lets them through again.
func TestDBProxyCutsAndRestores(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	p := newDBProxy(t, hostPort(t, c.dsn))
	via := &cluster{t: t, dsn: p.DSN(c.dsn)}
	via.ok("db", "migrate")
	p.Cut()
	if r := via.run("list"); r.code == 0 {
		t.Fatalf("list through a cut proxy succeeded: %s", r.stdout)
	}
	p.Restore()
	via.ok("list")
}

// hostPort is the host:port of a database URL.
func hostPort(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
