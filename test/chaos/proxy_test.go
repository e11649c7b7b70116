package chaos

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// proxy is a TCP proxy between the resque-go processes and Redis that can
// cut every connection (each side sees a reset or EOF) and black-hole them:
// for a while nothing is forwarded either way and new connections are
// accepted but never connected on, as in a network partition; when the
// black hole ends, every connection it held is cut.
type proxy struct {
	ln      net.Listener
	backend string

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	hole  chan struct{} // non-nil while black-holing; closed when it ends
	cuts  int           // connections cut, by Cut and by the end of black holes
}

func startProxy(t *testing.T, backend string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, backend: backend, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
	})
	return p
}

// URL is the redis:// URL the processes are given.
func (p *proxy) URL() string { return "redis://" + p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *proxy) handle(c net.Conn) {
	hole := p.track(c)
	if hole != nil {
		<-hole // accepted, never connected on; cut when the hole ends
		c.Close()
		return
	}
	p.mu.Lock()
	backend := p.backend
	p.mu.Unlock()
	b, err := net.DialTimeout("tcp", backend, time.Second)
	if err != nil { // Redis is down: the client sees its connection closed
		p.untrack(c)
		c.Close()
		return
	}
	if p.track(b) != nil {
		p.untrack(b, c)
		b.Close()
		c.Close()
		return
	}
	go p.pipe(b, c)
	p.pipe(c, b)
}

// pipe copies src to dst until either side fails; bytes read during a
// black hole are dropped and the pipe waits for the hole to end.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if hole := p.current(); hole != nil {
				<-hole
				break
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	src.Close()
	dst.Close()
	p.untrack(src, dst)
}

// track registers c and returns the current black hole (nil when none).
func (p *proxy) track(c net.Conn) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns[c] = struct{}{}
	return p.hole
}

func (p *proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// Retarget sends new connections to addr (after a failover); the caller
// cuts the old ones.
func (p *proxy) Retarget(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backend = addr
}

func (p *proxy) current() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hole
}

// Cut closes every connection and returns how many client and server
// sides it closed.
func (p *proxy) Cut() int {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.conns = map[net.Conn]struct{}{}
	p.cuts += len(conns)
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	return len(conns)
}

// BlackHole forwards nothing for d, then cuts every connection.
func (p *proxy) BlackHole(d time.Duration) {
	p.mu.Lock()
	if p.hole != nil {
		p.mu.Unlock()
		return
	}
	hole := make(chan struct{})
	p.hole = hole
	p.mu.Unlock()
	time.Sleep(d) // the black hole's length: the thing being simulated
	p.mu.Lock()
	p.hole = nil
	p.mu.Unlock()
	p.Cut()
	close(hole)
}

// The proxy forwards, cuts and black-holes (tested against a tiny line
// echo server).
func TestProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						c.Close()
						return
					}
					c.Write([]byte(strings.ToUpper(line)))
				}
			}()
		}
	}()
	p := startProxy(t, ln.Addr().String())
	addr := strings.TrimPrefix(p.URL(), "redis://")
	echo := func(c net.Conn, r *bufio.Reader, timeout time.Duration) (string, error) {
		_ = c.SetDeadline(time.Now().Add(timeout))
		if _, err := c.Write([]byte("ping\n")); err != nil {
			return "", err
		}
		return r.ReadString('\n')
	}
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	c, r := dial()
	if got, err := echo(c, r, 2*time.Second); got != "PING\n" {
		t.Fatalf("through the proxy: %q %v", got, err)
	}
	if n := p.Cut(); n != 2 {
		t.Errorf("cut %d connection sides, want 2", n)
	}
	if _, err := echo(c, r, 2*time.Second); err == nil {
		t.Error("a cut connection still answers")
	}
	c, r = dial()
	if got, err := echo(c, r, 2*time.Second); got != "PING\n" {
		t.Fatalf("after a cut: %q %v", got, err)
	}
	go p.BlackHole(300 * time.Millisecond)
	for p.current() == nil {
		time.Sleep(time.Millisecond) // bounded: BlackHole sets it at once
	}
	if got, err := echo(c, r, 100*time.Millisecond); err == nil {
		t.Errorf("answered during a black hole: %q", got)
	}
	c2, r2 := dial()
	if got, err := echo(c2, r2, 100*time.Millisecond); err == nil {
		t.Errorf("a new connection answered during a black hole: %q", got)
	}
	if _, err := echo(c2, r2, 2*time.Second); err == nil {
		t.Error("a connection of the black hole survived its end")
	}
	c, r = dial()
	if got, err := echo(c, r, 2*time.Second); got != "PING\n" {
		t.Fatalf("after the black hole: %q %v", got, err)
	}
}
