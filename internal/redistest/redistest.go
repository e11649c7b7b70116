// Package redistest starts a real redis-server on a free port for tests.
package redistest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

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

// Start launches redis-server with persistence off on a free port (or on
// port when non-zero) and waits until it accepts connections.
func Start(port int) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redistest: redis-server not found on PATH (apt-get install redis-server): %w", err)
	}
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "redistest")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--loglevel", "warning", "--logfile", "")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redistest: start redis-server: %w", err)
	}
	go func() { _, _ = io.Copy(io.Discard, bufio.NewReader(out)) }()
	s := &Server{Port: port, Dir: dir, cmd: cmd}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr()) == nil {
			return s, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("redistest: redis-server on port %d did not answer PING within 10s", port)
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

// Namespace returns a fresh random namespace so tests can share a server.
func Namespace(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	return "t-" + name + "-" + hex.EncodeToString(b[:])
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redistest: free port: %w", err)
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

// Main is used from TestMain: it starts a shared server, exports its URL in
// env, runs the tests and stops it.
func Main(m *testing.M, env string) int {
	s, err := Start(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Stop()
	os.Setenv(env, s.URL())
	return m.Run()
}
