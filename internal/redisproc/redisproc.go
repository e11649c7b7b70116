// Package redisproc runs a redis-server child process with persistence off
// on a free local port: the test harness (internal/redistest) and the bench
// command start their servers with it.
package redisproc

import (
	"bufio"
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
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "redisproc")
	if err != nil {
		return nil, fmt.Errorf("redisproc: %w", err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--loglevel", "warning", "--logfile", "")
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("redisproc: %w", err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("redisproc: start redis-server: %w", err)
	}
	go func() { _, _ = io.Copy(io.Discard, bufio.NewReader(out)) }()
	s := &Server{Port: port, Dir: dir, cmd: cmd}
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		if ping(s.Addr()) == nil {
			return s, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("redisproc: redis-server on port %d did not answer PING within %s", port, readyTimeout)
}

// Stop kills the server and removes its directory.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
	_ = os.RemoveAll(s.Dir)
}

// Restart kills the server and starts a new one on the same port.
func (s *Server) Restart() error {
	s.Stop()
	ns, err := Start(s.Port)
	if err != nil {
		return err
	}
	*s = *ns
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redisproc: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
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
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}
