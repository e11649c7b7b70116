package worker

import (
	"os"
	"path/filepath"
	"testing"
)

// What processes of finished jobs write late is removed by the handler's
// sweep of its own directory; the replies of running jobs are not.
func TestResultDirSweepsLateWritesOnly(t *testing.T) {
	d := &resultDir{parent: t.TempDir()}
	finished, err := d.name()
	if err != nil {
		t.Fatal(err)
	}
	running, err := d.name()
	if err != nil {
		t.Fatal(err)
	}
	if finished == running {
		t.Fatalf("two jobs share %s", finished)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(finished, `{"retry": true}`)
	if got := string(d.done(finished)); got != `{"retry": true}` {
		t.Fatalf("done read %q", got)
	}
	if _, err := os.Stat(finished); !os.IsNotExist(err) {
		t.Fatalf("a finished job's reply is still there: %v", err)
	}
	if got := d.done(filepath.Join(filepath.Dir(finished), "99.json")); got != nil {
		t.Fatalf("a job that wrote nothing read %q", got)
	}
	write(finished, `{"discard": true}`) // a process the job left behind
	write(running, `{"discard": true}`)
	stray := filepath.Join(filepath.Dir(running), "stray")
	if err := os.MkdirAll(filepath.Join(stray, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if n := d.sweepOwn(); n != 2 {
		t.Errorf("sweep removed %d entries, want 2", n)
	}
	for p, want := range map[string]bool{finished: false, stray: false, running: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	if got := string(d.done(running)); got != `{"discard": true}` {
		t.Errorf("the running job's reply was %q after the sweep", got)
	}
}
