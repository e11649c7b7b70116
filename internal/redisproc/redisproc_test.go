package redisproc

import "testing"

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
