package e2e

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/resque-go/resque-go/internal/redistest"
)

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// freePortRun returns the first of n consecutive ports that are free now,
// below Linux's ephemeral range (32768 and up), where the kernel would pick
// ports for outgoing connections: a random base up to 40000 collided with
// one now and then.
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for range 100 {
		base := 20000 + rand.IntN(12000)
		free := true
		for p := base; p < base+n && free; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				free = false
				continue
			}
			l.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no run of free ports found")
	return 0
}

// pool --metrics-addr: the manager serves its children's states; each child
// serves its own /metrics and /healthz on the next ports.
func TestPoolMetricsPorts(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	base := freePortRun(t, 3)
	cfg := writeFile(t, t.TempDir(), "pool.yml", "workers:\n  - queues: a\n    processes: 2\nhandlers:\n  \"*\": {exec: \"true\"}\n")
	p := start(t, ns, "pool", "--config", cfg, "--status-interval", "0.2", "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", base))
	redistest.Eventually(t, 0, func() bool {
		code, body := httpGet(fmt.Sprintf("http://127.0.0.1:%d/metrics", base))
		return code == 200 && strings.Contains(body, `resque_pool_children{state="running"} 2`)
	}, "manager metrics with 2 running children")
	for off := 1; off <= 2; off++ {
		redistest.Eventually(t, 0, func() bool {
			code, body := httpGet(fmt.Sprintf("http://127.0.0.1:%d/metrics", base+off))
			return code == 200 && strings.Contains(body, "resque_worker_slots 1")
		}, "child metrics")
		if code, body := httpGet(fmt.Sprintf("http://127.0.0.1:%d/healthz", base+off)); code != 200 || body != "ok\n" {
			t.Errorf("child %d /healthz: %d %q", off, code, body)
		}
	}
	if code, _ := httpGet(fmt.Sprintf("http://127.0.0.1:%d/healthz", base)); code != 200 {
		t.Errorf("manager /healthz: %d", code)
	}
	p.signal(t, syscall.SIGQUIT)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// httpGetToken is httpGet with a bearer token.
func httpGetToken(url, token string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
