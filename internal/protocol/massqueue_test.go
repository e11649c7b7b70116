package protocol

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMassKeys(t *testing.T) {
	k := NewKeys("resqu-v5")
	for _, c := range []struct{ got, want string }{
		{k.Unassigned(), "resqu-v5:unassigned"},
		{k.Uncommitted("s1:imp:0a1b2c3d"), "resqu-v5:uncommitted:s1:imp:0a1b2c3d"},
		{k.CommittedList(), "resqu-v5:committed"},
		{k.Committed("s1:imp:0a1b2c3d"), "resqu-v5:committed:s1:imp:0a1b2c3d"},
		{k.SourceRoute("s1", "imp"), "resqu-v5:src:s1:cfg:imp"},
		{k.SourceRoute("s1", "default"), "resqu-v5:src:s1:cfg:default"},
		{k.StaticQueue("general"), "resqu-v5:static:queue:general"},
		{k.StaticSourceQueue("general", "s1"), "resqu-v5:static:queue:general:s1"},
		{k.PoolSources("imports"), "resqu-v5:pool:imports"},
		{k.PoolUnitQueues("imports"), "resqu-v5:pool:imports:unit_queues"},
		{k.UnitQueues("imports", "web_1-0"), "resqu-v5:pool:imports:web_1-0:queues"},
		{UnitQueuesMember("imports", "web_1-0"), "pool:imports:web_1-0:queues"},
		{k.Backlog("imports", "s1"), "resqu-v5:pool:imports:backlog:s1"},
		{k.AllocationFailures(), "resqu-v5:batch:allocation_failures"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if u, ok := ParseUnitQueuesMember("imports", "pool:imports:web_1-10:queues"); !ok || u != "web_1-10" {
		t.Errorf("parse member: %q %v", u, ok)
	}
	if s, j, ok := k.ParseSourceRoute("resqu-v5:src:s1:cfg:a:b"); !ok || s != "s1" || j != "a:b" {
		t.Errorf("parse route: %q %q %v", s, j, ok)
	}
}

func TestNewMassPayload(t *testing.T) {
	now := time.Unix(1700000000, 123400000)
	for _, c := range []struct {
		name string
		job  MassJob
		want string
	}{
		{"minimal", MassJob{Class: `\App\Job`, SourceID: "s1", Name: "imp", ID: "x", Now: now},
			`{"class":"\\App\\Job","sourceId":"s1","name":"imp","id":"x","queue_time":1700000000.1234}`},
		{"empty args left out", MassJob{Class: "C", SourceID: "s1", Name: "n", Args: []byte(" {} "), ID: "x", Now: now},
			`{"class":"C","sourceId":"s1","name":"n","id":"x","queue_time":1700000000.1234}`},
		{"all", MassJob{Class: "C", SourceID: "s1", Name: "n", Args: []byte(`{"a": [1, 2]}`), FailCount: 2, ID: "x", Now: now,
			Unique: Unique{UID: "u1", Deferrable: true, DeferrableBy: 30}},
			`{"class":"C","sourceId":"s1","name":"n","args":{"a":[1,2]},"unique":{"uid":"u1","deferrableBy":30},"failCount":2,"id":"x","queue_time":1700000000.1234}`},
	} {
		got, err := NewMassPayload(c.job)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %s %v\nwant %s", c.name, got, err, c.want)
		}
	}
	for _, bad := range []MassJob{{SourceID: "s", Name: "n"}, {Class: "C", Name: "n"}, {Class: "C", SourceID: "a:b", Name: "n"}, {Class: "C", SourceID: "s"}} {
		if _, err := NewMassPayload(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestDecodeMassPayload(t *testing.T) {
	for _, c := range []struct {
		raw, err string
		v        MassView
	}{
		{`{"class":"C","sourceId":"s1","name":"n","args":{}}`, "", MassView{"C", "s1", "n"}},
		{`{"class":"C","sourceId":145680,"name":"n"}`, "", MassView{"C", "145680", "n"}},
		{`{"class":"C","args":[]}`, "missing sourceId, name", MassView{}},
		{`{"sourceId":"s"}`, "missing class, name", MassView{}},
		{`{"class":"C","sourceId":"a:b","name":"n"}`, "contains ':'", MassView{}},
		{`nope`, "not a JSON object", MassView{}},
	} {
		v, err := DecodeMassPayload([]byte(c.raw))
		if c.err == "" {
			if err != nil || v != c.v {
				t.Errorf("%s: %+v %v", c.raw, v, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: error %v, want %q", c.raw, err, c.err)
		}
	}
}

func TestBatchID(t *testing.T) {
	id := NewBatchID("s1", "imp")
	s, n, suf, err := ParseBatchID(id)
	if err != nil || s != "s1" || n != "imp" || len(suf) != 8 || strings.Trim(suf, "0123456789abcdef") != "" {
		t.Fatalf("%q: %q %q %q %v", id, s, n, suf, err)
	}
	if _, _, _, err := ParseBatchID("s1:imp"); err == nil {
		t.Error("two parts accepted")
	}
	for _, s := range []string{"", "a:b", "a b"} {
		if CheckSourceID(s) == nil {
			t.Errorf("source %q accepted", s)
		}
	}
}

// A ring entry is a source id or an inline entry: the source, then the
// payload whole (its own colons included).
func TestStaticRingEntries(t *testing.T) {
	p := `{"class":"J","sourceId":"s1","name":"n","args":{"a:b":"c:d"}}`
	e := StaticInline("s1", p)
	if s, got, inline := ParseStaticEntry(e); s != "s1" || got != p || !inline {
		t.Errorf("inline entry %q: %q %q %v", e, s, got, inline)
	}
	if s, got, inline := ParseStaticEntry("s1"); s != "s1" || got != "" || inline {
		t.Errorf("name: %q %q %v", s, got, inline)
	}
}
