// Package redisproc runs a redis-server child process with persistence off
// (unless Options turn it on) on a free local port: the test harness
// (internal/redistest), the bench command and the chaos test start their
// servers with it.
package redisproc

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNotInstalled is returned by Start when redis-server is not on PATH.
var ErrNotInstalled = errors.New("redis-server not found on PATH (apt-get install redis-server)")

// Server is a redis-server child process.
type Server struct {
	Port int
	Dir  string
	cmd  *exec.Cmd
	opt  Options
}

// Options are StartWith's settings beyond Start's port.
type Options struct {
	// Port is the port to serve (0: a free one).
	Port int
	// Args are more redis-server arguments, after the defaults (a later
	// argument wins): --replicaof, --sentinel, TLS certificates,
	// --appendonly yes...
	Args []string
	// Dir, when set, is the server's directory (its append-only file or
	// snapshot, with persistence turned on in Args): created when missing
	// and kept by Stop, so Restart starts on the same data. Default: a
	// fresh temporary directory that Stop removes.
	Dir string
	// Config, when set, is written as redis.conf in the server's directory
	// and named as the first argument (a Sentinel needs a config file it
	// can rewrite).
	Config string
	// TLS makes Port a TLS port (--tls-port Port --port 0) and the
	// readiness PING go through TLS with this config; the certificate
	// arguments go in Args.
	TLS *tls.Config
}

// Addr is host:port of the server.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL is the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// PID is the server's process id.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// readyTimeout bounds how long Start waits for the first PONG.
const readyTimeout = 10 * time.Second

// Start launches redis-server on 127.0.0.1 with persistence off (no RDB
// snapshots, no AOF) in a fresh temporary directory, on a free port (or on
// port when non-zero), and waits until it answers PING.
func Start(port int) (*Server, error) {
	return StartWith(Options{Port: port})
}

// StartWith is Start with more arguments, a config file or TLS.
func StartWith(opt Options) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	port := opt.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	dir, err := serverDir(opt.Dir)
	if err != nil {
		return nil, err
	}
	cleanup := func() {
		if opt.Dir == "" {
			os.RemoveAll(dir)
		}
	}
	var args []string
	if opt.Config != "" {
		conf := dir + "/redis.conf"
		if err := os.WriteFile(conf, []byte(opt.Config), 0o600); err != nil {
			cleanup()
			return nil, fmt.Errorf("redisproc: %w", err)
		}
		args = append(args, conf)
	}
	ports := []string{"--port", strconv.Itoa(port)}
	if opt.TLS != nil {
		ports = []string{"--port", "0", "--tls-port", strconv.Itoa(port)}
	}
	args = append(append(args, ports...), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--loglevel", "warning", "--logfile", "")
	cmd := exec.Command(bin, append(args, opt.Args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("redisproc: %w", err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		cleanup()
		return nil, fmt.Errorf("redisproc: start redis-server: %w", err)
	}
	go func() { _, _ = io.Copy(io.Discard, bufio.NewReader(out)) }()
	s := &Server{Port: port, Dir: dir, cmd: cmd, opt: opt}
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		if pingTLS(s.Addr(), opt.TLS) == nil {
			return s, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("redisproc: redis-server on port %d did not answer PING within %s", port, readyTimeout)
}

// Stop kills the server (SIGKILL: nothing is flushed that was not
// already) and removes its directory unless Options.Dir named it.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
	if s.opt.Dir == "" {
		_ = os.RemoveAll(s.Dir)
	}
}

// Restart kills the server and starts a new one on the same port, with
// the same options (in the same directory when Options.Dir is set).
func (s *Server) Restart() error {
	s.Stop()
	opt := s.opt
	opt.Port = s.Port
	ns, err := StartWith(opt)
	if err != nil {
		return err
	}
	*s = *ns
	return nil
}

// serverDir creates dir, or a temporary directory when dir is "".
func serverDir(dir string) (string, error) {
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "redisproc")
	} else {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return "", fmt.Errorf("redisproc: %w", err)
	}
	return dir, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redisproc: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func ping(addr string) error { return pingTLS(addr, nil) }

// pingTLS is ping through TLS with cfg (plain TCP when nil).
func pingTLS(addr string, cfg *tls.Config) error {
	var c net.Conn
	var err error
	if cfg != nil {
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, cfg)
	} else {
		c, err = net.DialTimeout("tcp", addr, time.Second)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	// A server that wants a password is up too.
	if !strings.HasPrefix(line, "+PONG") && !strings.HasPrefix(line, "-NOAUTH") {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}

// SentinelSupport reports whether redis-server runs as a Sentinel
// (--sentinel): it starts it so without a config file, which a Sentinel
// refuses with a message of its own.
func SentinelSupport() bool {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, bin, "--sentinel", "--port", "0").CombinedOutput()
	return strings.Contains(string(out), "Sentinel needs config file")
}
