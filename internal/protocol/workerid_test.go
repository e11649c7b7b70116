package protocol_test

import (
	"strings"
	"testing"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

func TestParseWorkerIDFixtures(t *testing.T) {
	t.Parallel()
	// Every id Ruby, PHP and node-resque put into resque:workers.
	for _, id := range fixtureWorkerIDs(t) {
		w, err := protocol.ParseWorkerID(id)
		if err != nil {
			t.Errorf("ParseWorkerID(%q): %v", id, err)
			continue
		}
		if w.Host != "vm" || w.PID <= 0 || w.Slot != 0 || w.Queues != "high,mail" {
			t.Errorf("ParseWorkerID(%q) = %+v", id, w)
		}
		if got := w.String(); got != id {
			t.Errorf("ParseWorkerID(%q).String() = %q", id, got)
		}
	}
}

func TestParseWorkerIDPerOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dir, scenario string
		want          protocol.WorkerID
	}{
		{"ruby-resque-3.0.0", "worker-running", protocol.WorkerID{Host: "vm", PID: 25407, Queues: "high,mail"}},
		{"php-resque-chrisboulton", "worker-running", protocol.WorkerID{Host: "vm", PID: 30031, Queues: "high,mail"}},
		{"php-resque-resque-1.3.6", "worker-running", protocol.WorkerID{Host: "vm", PID: 30723, Queues: "high,mail"}},
		{"php-resque-resque-master", "worker-running", protocol.WorkerID{Host: "vm", PID: 31477, Queues: "high,mail"}},
		{"node-resque-9.7.1", "worker-running", protocol.WorkerID{Host: "vm", PID: 2351, Queues: "high,mail"}},
	}
	for _, tt := range tests {
		ids := fixtures.MustLoad(tt.dir, tt.scenario).List("resque:workers")
		if len(ids) != 1 {
			t.Fatalf("%s/%s: workers = %v", tt.dir, tt.scenario, ids)
		}
		w, err := protocol.ParseWorkerID(ids[0])
		if err != nil || w != tt.want {
			t.Errorf("%s: ParseWorkerID(%q) = %+v, %v; want %+v", tt.dir, ids[0], w, err, tt.want)
		}
	}
}

func TestParseWorkerIDRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   string
		want protocol.WorkerID
	}{
		{"vm:25407:high,mail", protocol.WorkerID{Host: "vm", PID: 25407, Queues: "high,mail"}},
		{"vm:2351:high,mail", protocol.WorkerID{Host: "vm", PID: 2351, Queues: "high,mail"}},
		{"web-01.example.com:1:*", protocol.WorkerID{Host: "web-01.example.com", PID: 1, Queues: "*"}},
		{"host:12-3:high,low", protocol.WorkerID{Host: "host", PID: 12, Slot: 3, Queues: "high,low"}},
		{"host:12-1:mail", protocol.WorkerID{Host: "host", PID: 12, Slot: 1, Queues: "mail"}},
		{"host:4194304-128:critical,*,!tmp*", protocol.WorkerID{Host: "host", PID: 4194304, Slot: 128, Queues: "critical,*,!tmp*"}},
		{"host:7:a:b", protocol.WorkerID{Host: "host", PID: 7, Queues: "a:b"}},
		{"host:7-2:a:b,c:d:e", protocol.WorkerID{Host: "host", PID: 7, Slot: 2, Queues: "a:b,c:d:e"}},
		{"host:7::", protocol.WorkerID{Host: "host", PID: 7, Queues: ":"}},
		{"h:9:mail ", protocol.WorkerID{Host: "h", PID: 9, Queues: "mail "}},
	}
	for _, tt := range tests {
		w, err := protocol.ParseWorkerID(tt.id)
		if err != nil {
			t.Errorf("ParseWorkerID(%q): %v", tt.id, err)
			continue
		}
		if w != tt.want {
			t.Errorf("ParseWorkerID(%q) = %+v, want %+v", tt.id, w, tt.want)
		}
		if got := w.String(); got != tt.id {
			t.Errorf("ParseWorkerID(%q).String() = %q", tt.id, got)
		}
		if got := tt.want.String(); got != tt.id {
			t.Errorf("%+v.String() = %q, want %q", tt.want, got, tt.id)
		}
	}
}

func TestParseWorkerIDErrors(t *testing.T) {
	t.Parallel()
	for _, id := range []string{
		"",
		"vm",
		"vm:2351", // node-resque's worker name: resque-web needs three parts
		":2351:high",
		"vm:abc:high",
		"vm::high",
		"vm:0:high",
		"vm:-1:high",
		"vm:2351:",
		"vm:1-:high",
		"vm:1-0:high",
		"vm:1--2:high",
		"vm:1-x:high",
		"vm:1-2-3:high",
		"vm:-2:high",
		"vm: 1:high",
		"vm:1.5:high",
		"vm:99999999999999999999:high",
	} {
		if w, err := protocol.ParseWorkerID(id); err == nil {
			t.Errorf("ParseWorkerID(%q) = %+v, want an error", id, w)
		} else if !strings.Contains(err.Error(), "protocol: worker id") {
			t.Errorf("ParseWorkerID(%q) error %q lacks the package prefix", id, err)
		}
	}
}
