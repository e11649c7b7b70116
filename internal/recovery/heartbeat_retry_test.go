package recovery_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/recovery"
	"github.com/resque-go/resque-go/internal/redistest"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// After every connection is cut (a Redis restart, a network blip), the
// pool's idle connections fail on first use: the heartbeat tries again on a
// fresh one instead of missing the beat (three missed beats and other
// processes run this process's jobs again).
func TestHeartbeatSurvivesCutConnections(t *testing.T) {
	srv, err := redistest.Start(0) // its own server: every client is cut
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := rdb.New(rdb.Options{URL: srv.URL(), Namespace: redistest.Namespace(t), ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	admin, err := rdb.New(rdb.Options{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	id := fmt.Sprintf("testhost:%d:q", os.Getpid())
	if _, err := c.Register(context.Background(), id, time.Now(), 100*time.Millisecond, true); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	l := zerolog.New(&logs).Level(zerolog.WarnLevel)
	// a beat has the whole interval to get through, a loaded machine's
	// dial included: what fails here is a cut connection, never a slow one
	s, err := recovery.New(recovery.Config{Client: c, IDs: []string{id}, Hostname: "testhost", HeartbeatInterval: time.Second,
		PruneInterval: time.Hour, Logger: &l})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	defer s.Stop()
	beat := func(what string) {
		t.Helper()
		last := s.LastHeartbeat()
		redistest.Eventually(t, 0, func() bool { return s.LastHeartbeat().After(last) }, what)
	}
	for range 3 {
		beat("a beat, so the pool holds an idle connection")
		if _, err := admin.Do(context.Background(), "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
			t.Fatal(err)
		}
	}
	beat("the beat after the last cut")
	if strings.Contains(logs.String(), "heartbeat failed") {
		t.Errorf("a heartbeat was missed after the connections were cut:\n%s", logs.String())
	}
}
