package redisproc

import (
	"bufio"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestStartStopRestart(t *testing.T) {
	s, err := Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if s.Port == 0 || s.PID() == 0 || s.URL() != "redis://"+s.Addr() {
		t.Fatalf("server %+v, pid %d, url %s", s, s.PID(), s.URL())
	}
	port, pid := s.Port, s.PID()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.Port != port || s.PID() == pid {
		t.Errorf("after restart: port %d (was %d), pid %d (was %d)", s.Port, port, s.PID(), pid)
	}
	if err := ping(s.Addr()); err != nil {
		t.Errorf("restarted server does not answer: %v", err)
	}
	s.Stop()
	if err := ping(s.Addr()); err == nil {
		t.Error("stopped server still answers")
	}
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Start(0); err != ErrNotInstalled {
		t.Errorf("got %v, want ErrNotInstalled", err)
	}
}

// A TLS server listens on its port with TLS only, and restarts so.
func TestStartWithTLS(t *testing.T) {
	certs, err := WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := certs.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartWith(Options{TLS: cfg, Args: certs.ServerArgs(true)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := pingTLS(s.Addr(), cfg); err != nil {
		t.Errorf("TLS ping: %v", err)
	}
	if err := ping(s.Addr()); err == nil {
		t.Error("a plain ping was answered")
	}
}

// With Dir and an append-only file, a server killed with -9 and restarted
// in the same directory has the data it acknowledged.
func TestRestartKeepsAppendOnlyData(t *testing.T) {
	dir := t.TempDir()
	s, err := StartWith(Options{Dir: dir, Args: []string{"--appendonly", "yes", "--appendfsync", "always"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if got := inline(t, s.Addr(), "SET k v"); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if got := inline(t, s.Addr(), "GET k"); got != "$1" {
		t.Errorf("GET after restart: %q, want the value back", got)
	}
	s.Stop()
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("Stop removed the given directory: %v", err)
	}
}

// inline sends one inline command and returns the first line of the reply.
func inline(t *testing.T, addr, cmd string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}
