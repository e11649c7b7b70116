package worker

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{" 7 ", 7 * time.Second},
		{"0", time.Second},
		{"-5", time.Second},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), time.Second},
		{"soon", 0},
	} {
		if got := retryAfter(tc.in, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRateLimitedReplies(t *testing.T) {
	for _, tc := range []struct {
		reply string
		want  time.Duration
	}{
		{`{"rate_limited": 12.5}`, 12500 * time.Millisecond},
		{`{"rate_limited": 0}`, DefaultRateLimitDelay},
		{`{"rate_limited": 1e300}`, 100 * 365 * 24 * time.Hour},
		{`{"rate_limited": 3, "rescheduleDelay": 9}`, 3 * time.Second},
	} {
		var rl *RateLimitedError
		if err := execReply([]byte(tc.reply), nil); !errors.As(err, &rl) || rl.After != tc.want {
			t.Errorf("execReply(%s) = %v, want rate limited for %s", tc.reply, err, tc.want)
		}
	}
	if RateLimited(-time.Second).(*RateLimitedError).After != DefaultRateLimitDelay {
		t.Error("RateLimited(negative) has no default delay")
	}
	// a fork child's result carries it to the parent
	var rl *RateLimitedError
	if err := encodeResult(RateLimited(4 * time.Second)).decode(); !errors.As(err, &rl) || rl.After != 4*time.Second {
		t.Errorf("fork round trip = %v", err)
	}
}
