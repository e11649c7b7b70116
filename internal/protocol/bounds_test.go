package protocol_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Durations and due times are bounded (protocol.MaxDelay, MaxTimestamp):
// the bounds themselves pass, one step past them does not, and the error
// names the value.
func TestDelayBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {time.Second, true}, {protocol.MaxDelay, true}, {protocol.MaxDelay + time.Second, false}, {-time.Second, false}, {math.MaxInt64, false}} {
		err := protocol.CheckDelay("--in", c.d)
		if (err == nil) != c.ok || err != nil && (!errors.Is(err, protocol.ErrOutOfRange) || !strings.HasPrefix(err.Error(), "--in ")) {
			t.Errorf("CheckDelay(%v) = %v, want ok %v", c.d, err, c.ok)
		}
	}
	for _, c := range []struct {
		s  float64
		ok bool
	}{{0, true}, {30, true}, {protocol.MaxDelaySeconds, true}, {protocol.MaxDelaySeconds + 1, false}, {9e18, false}, {-1, false},
		{math.NaN(), false}, {math.Inf(1), false}} {
		if err := protocol.CheckDelaySeconds("deferrableBy", c.s); (err == nil) != c.ok {
			t.Errorf("CheckDelaySeconds(%v) = %v, want ok %v", c.s, err, c.ok)
		}
	}
	end := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	if end.Unix() != protocol.MaxTimestamp {
		t.Fatalf("MaxTimestamp %d, want %d (%s)", protocol.MaxTimestamp, end.Unix(), end)
	}
	for _, c := range []struct {
		t  time.Time
		ok bool
	}{{time.Unix(0, 0), true}, {time.Unix(1_800_000_000, 0), true}, {end, true}, {end.Add(time.Nanosecond), false},
		{end.Add(time.Second), false}, {time.Unix(-1, 0), false}, {time.Unix(9e18, 0), false}} {
		if err := protocol.CheckDue("--at", c.t); (err == nil) != c.ok || err != nil && !strings.HasPrefix(err.Error(), "--at ") {
			t.Errorf("CheckDue(%v) = %v, want ok %v", c.t, err, c.ok)
		}
	}
}

// A payload's deferrableBy past the bound is a malformed unique field (the
// uid is still known, so the claim's mark is released), and resque-go
// never writes one; a queue_time past the bounds reads as absent.
func TestPayloadTimesBounded(t *testing.T) {
	t.Parallel()
	u, ok, err := protocol.ParseUnique([]byte(`{"class":"C","args":[],"unique":{"uid":"D","deferrableBy":9e18}}`))
	if !ok || u.UID != "D" || err == nil || !strings.Contains(err.Error(), "9000000000000000000") {
		t.Errorf("ParseUnique with deferrableBy 9e18 = %+v, %v, %v; want the uid and an error naming the value", u, ok, err)
	}
	if _, ok, err := protocol.ParseUnique([]byte(`{"class":"C","args":[],"unique":{"uid":"D","deferrableBy":3153600000}}`)); !ok || err != nil {
		t.Errorf("deferrableBy at the bound: %v %v", ok, err)
	}
	big := protocol.Unique{UID: "D", Deferrable: true, DeferrableBy: protocol.MaxDelaySeconds + 1}
	if _, err := protocol.NewPayload("C", nil, protocol.EnqueueOptions{Unique: big}); !errors.Is(err, protocol.ErrOutOfRange) {
		t.Errorf("NewPayload with deferrableBy past the bound: %v", err)
	}
	if _, err := protocol.NewMassPayload(protocol.MassJob{Class: "C", SourceID: "s", Name: "n", Unique: big}); !errors.Is(err, protocol.ErrOutOfRange) {
		t.Errorf("NewMassPayload with deferrableBy past the bound: %v", err)
	}
	for _, qt := range []string{`-9e15`, `9e18`, `"1e300"`} {
		p, err := protocol.DecodePayload([]byte(`{"class":"C","args":[],"queue_time":` + qt + `}`))
		if err != nil || p.HasQueueTime {
			t.Errorf("queue_time %s: %+v %v; want read as absent", qt, p, err)
		}
	}
}
