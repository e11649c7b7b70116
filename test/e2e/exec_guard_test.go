package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// startEnv is start with variables added to the process's environment.
func startEnv(t *testing.T, ns string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, append(args, "--redis", redisURL, "--namespace", ns)...)
	cmd.Env = append(os.Environ(), env...)
	p := &proc{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("output of %v:\n%s", args, p.out.String())
		}
	})
	return p
}

// processesWithEnv lists the live processes whose environment holds entry
// (a zombie's environment reads empty).
func processesWithEnv(t *testing.T, entry string) []int {
	t.Helper()
	names, err := filepath.Glob("/proc/[0-9]*/environ")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if string(kv) == entry {
				pid, _ := strconv.Atoi(strings.Split(name, "/")[2])
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

func randomMark(t *testing.T) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func resultFiles(t *testing.T, dir string) []string {
	t.Helper()
	var all []string
	// a fork-mode child's file, and a worker's directory
	for _, pattern := range []string{"resque-go-result-*.json", "resque-go-results-*"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, m...)
	}
	return all
}

// kill -9 of a worker whose exec job started a grandchild: nothing the job
// started survives the worker (the grandchild never writes its marker), in
// process and in fork mode; the dead worker's $RESQUE_RESULT directory (in
// fork mode the child's file) is swept by the next worker.
func TestExecKill9LeavesNoJobProcess(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc")
	}
	for _, fork := range []bool{false, true} {
		t.Run(fmt.Sprintf("fork=%v", fork), func(t *testing.T) {
			t.Parallel()
			ns := redistest.Namespace(t)
			c := client(t, ns)
			k := c.Keys()
			dir := t.TempDir()
			tmp := filepath.Join(dir, "tmp")
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			pidFile, marker := filepath.Join(dir, "grandchild.pid"), filepath.Join(dir, "marker")
			script := filepath.Join(dir, "job.sh")
			body := fmt.Sprintf("#!/bin/sh\n( sleep 60; touch %q ) &\necho $! > %q\nsleep 60\n", marker, pidFile)
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			do(t, c, "RPUSH", k.Queue("q"), `{"class":"Job","args":[1]}`)
			mark := "E2E_JOB_MARK=" + randomMark(t)
			args := []string{"work", "-q", "q", "--exec", "*=" + script, "--log-format", "json"}
			if fork {
				args = append(args, "--fork")
			}
			a := startEnv(t, ns, []string{mark, "TMPDIR=" + tmp}, args...)
			var pid int
			redistest.Eventually(t, 0, func() bool {
				b, err := os.ReadFile(pidFile)
				if err != nil {
					return false
				}
				pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
				return err == nil
			}, "grandchild started")
			if got := processesWithEnv(t, mark); len(got) < 4 {
				t.Fatalf("expected the worker, the guard, the script and its grandchild, found %v", got)
			}
			a.signal(t, syscall.SIGKILL)
			a.wait(t)
			redistest.Eventually(t, 0, func() bool { return len(processesWithEnv(t, mark)) == 0 }, "every process of the job gone")
			if err := syscall.Kill(pid, 0); err == nil {
				if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(b), ") Z ") {
					t.Errorf("grandchild %d still runs", pid)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the grandchild wrote its marker after the worker died")
			}

			left := resultFiles(t, tmp)
			if len(left) != 1 {
				t.Fatalf("want the dead worker's result directory or file in %s, got %v", tmp, left)
			}
			old := time.Now().Add(-2 * time.Minute)
			if err := os.Chtimes(left[0], old, old); err != nil {
				t.Fatal(err)
			}
			args[4] = "*=true"
			startEnv(t, ns, []string{"TMPDIR=" + tmp}, args...)
			redistest.Eventually(t, 0, func() bool {
				n, _ := c.Int(t.Context(), k.StatProcessed())
				return n == 1
			}, "recovered job run")
			// (the live worker's own directory may be there)
			if _, err := os.Stat(left[0]); !os.IsNotExist(err) {
				t.Errorf("the dead worker's %s was not swept: %v", left[0], err)
			}
		})
	}
}

// Exec commands see neither the Redis URL (with its password) nor the HTTP
// token of the worker, in process or in fork mode, where the child needs
// the token for its --http handlers.
func TestExecEnvHasNoSecrets(t *testing.T) {
	t.Parallel()
	for _, fork := range []bool{false, true} {
		t.Run(fmt.Sprintf("fork=%v", fork), func(t *testing.T) {
			t.Parallel()
			ns := redistest.Namespace(t)
			c := client(t, ns)
			k := c.Keys()
			out := filepath.Join(t.TempDir(), "env")
			do(t, c, "RPUSH", k.Queue("q"), `{"class":"Job","args":[1],"id":"j1"}`)
			args := []string{"work", "-q", "q", "--exec", fmt.Sprintf("*=env > %q", out)}
			if fork {
				args = append(args, "--fork")
			}
			// --redis (added by startEnv) wins over REDIS_URL, which names
			// no server: the worker still has it in its environment.
			startEnv(t, ns, []string{"REDIS_URL=redis://:hunter2-url@127.0.0.1:1/0",
				"REDIS_BACKEND=redis://:hunter2-backend@127.0.0.1:1/0", "RESQUE_HTTP_TOKEN=hunter2-token", "E2E_KEEP=kept"}, args...)
			redistest.Eventually(t, 0, func() bool {
				n, _ := c.Int(t.Context(), k.StatProcessed())
				return n == 1
			}, "job done")
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			env := "\n" + string(b)
			if strings.Contains(env, "hunter2") {
				t.Errorf("a secret reached the job:\n%s", env)
			}
			for _, v := range []string{"E2E_KEEP=kept", "PATH=", "RESQUE_CLASS=Job", "RESQUE_JOB_ID=j1", "RESQUE_ARGS=[1]", "RESQUE_WORKER="} {
				if !strings.Contains(env, "\n"+v) {
					t.Errorf("%s missing from the job's environment:\n%s", v, env)
				}
			}
		})
	}
}
