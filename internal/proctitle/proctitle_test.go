package proctitle_test

import (
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/proctitle"
)

// The title is set in a child process (this test binary re-run), since it
// changes the process's command line for good; the parent reads it the way
// Ruby Resque and php-resque do, with ps -A -o pid,command.
func TestMain(m *testing.M) {
	if args := os.Getenv("PROCTITLE_ARGS"); args != "" {
		os.Args = proctitle.Prepare(os.Args)
		proctitle.SetArgs(strings.Split(args, "|"))
		os.Stdout.WriteString("ready\n")
		var b [1]byte
		os.Stdin.Read(b[:]) // wait until the parent has looked
		os.Exit(0)
	}
	if title := os.Getenv("PROCTITLE_CHILD"); title != "" {
		os.Args = proctitle.Prepare(os.Args)
		home := os.Getenv("HOME")
		proctitle.Set(title)
		if os.Getenv("HOME") != home { // the environment Go holds is untouched
			os.Exit(3)
		}
		os.Stdout.WriteString("ready\n")
		var b [1]byte
		os.Stdin.Read(b[:]) // wait until the parent has looked
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestTitleSeenByRubyAndPHP(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("titles are set on Linux only")
	}
	if _, err := exec.LookPath("ps"); err != nil {
		t.Skip("no ps")
	}
	title := "Processing mail since 1700000000 [MailJob]"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTITLE_CHILD="+title)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, _ := os.Pipe()
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	buf := make([]byte, 6)
	if _, err := r.Read(buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("child said %q (%v)", buf, err)
	}
	ps, err := exec.Command("ps", "-A", "-o", "pid,command").Output()
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	var line string
	for _, l := range strings.Split(string(ps), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == pid {
			line = l
		}
	}
	if !strings.Contains(line, proctitle.Prefix+title) {
		t.Fatalf("ps shows %q, want the title", line)
	}
	// Ruby Resque 3.0's worker_pids: resque:work, resque: Starting, resque-<digit>
	if !regexp.MustCompile(`resque:work|resque:\sStarting|resque-\d`).MatchString(line) {
		t.Errorf("Ruby Resque would not recognise %q", line)
	}
	// php-resque: ps -A -o pid,command | grep [r]esque
	if !strings.Contains(line, "resque") || strings.Contains(line, "resque-web") {
		t.Errorf("php-resque would not recognise %q", line)
	}
}

func TestSetWithoutPrepareIsHarmless(t *testing.T) {
	before := strings.Join(os.Args, " ")
	if proctitle.Capacity() == 0 {
		proctitle.Set("nothing happens")
	}
	if strings.Join(os.Args, " ") != before {
		t.Error("os.Args changed")
	}
}

// SetArgs replaces the arguments ps shows with others, still separate
// strings: a secret given on the command line is gone from
// /proc/<pid>/cmdline, the rest is as it was.
func TestSetArgsHidesASecret(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("titles are set on Linux only")
	}
	shown := []string{os.Args[0], "-test.run=^$", "--redis", "redis://:***@127.0.0.1:1", "work"}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--redis", "redis://:hunter2-secret@127.0.0.1:1", "work")
	cmd.Env = append(os.Environ(), "PROCTITLE_ARGS="+strings.Join(shown, "|"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, _ := os.Pipe()
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	buf := make([]byte, 6)
	if _, err := r.Read(buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("child said %q (%v)", buf, err)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline")
	stdin.Close()
	if werr := cmd.Wait(); werr != nil {
		t.Fatalf("child: %v", werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), "hunter2") {
		t.Errorf("the secret shows: %q", cmdline)
	}
	if got := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"); strings.Join(got, "|") != strings.Join(shown, "|") {
		t.Errorf("cmdline = %q, want %q", got, shown)
	}
}
