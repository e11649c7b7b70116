package protocol

import "testing"

func TestDecodeProcessControl(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ProcessControl
		ok   bool
	}{
		{"quiet 17 host:12", ProcessControl{Host: "host", PID: 12, Action: ActionQuiet, ID: "17"}, true},
		{"stop a1 h.example:3", ProcessControl{Host: "h.example", PID: 3, Action: ActionStop, ID: "a1"}, true},
		{"resume 1 host:12", ProcessControl{Host: "host", PID: 12, Action: ActionResume, ID: "1"}, true},
		{"pause 1 host:12", ProcessControl{}, false},
		{"quiet 1 host:0", ProcessControl{}, false},
		{"quiet 1 host:x", ProcessControl{}, false},
		{"quiet 1", ProcessControl{}, false},
		{"quiet  host:1", ProcessControl{}, false},
		{"", ProcessControl{}, false},
	} {
		got, err := DecodeProcessControl([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("DecodeProcessControl(%q) = %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && EncodeProcessControl(got) != tc.in {
			t.Errorf("EncodeProcessControl(%+v) = %q, want %q", got, EncodeProcessControl(got), tc.in)
		}
	}
	got, err := DecodeStoredProcessControl("h", 4, []byte("stop r9x"))
	if err != nil || got != (ProcessControl{Host: "h", PID: 4, Action: ActionStop, ID: "r9x"}) {
		t.Errorf("DecodeStoredProcessControl = %+v, %v", got, err)
	}
}

func TestParseProcessTarget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string
		pid  int
	}{
		{"web1:42", "web1", 42},
		{"web1:42-3", "web1", 42},
		{"web1:42-3:high,low", "web1", 42},
		{"web1:42:high", "web1", 42},
		{"web1:42:a:b", "web1", 42},
		{"web1", "", 0},
		{":42", "", 0},
		{"web1:0", "", 0},
		{"web1:x:q", "", 0},
		{"", "", 0},
	} {
		host, pid, err := ParseProcessTarget(tc.in)
		if host != tc.host || pid != tc.pid || (err == nil) != (tc.pid > 0) {
			t.Errorf("ParseProcessTarget(%q) = %q, %d, %v; want %q, %d", tc.in, host, pid, err, tc.host, tc.pid)
		}
	}
}
