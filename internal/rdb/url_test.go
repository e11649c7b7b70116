package rdb

import (
	"errors"
	"io"
	"testing"

	"github.com/gomodule/redigo/redis"
)

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                          "redis://127.0.0.1:6379",
		"localhost:6380":            "redis://localhost:6380",
		"redis-host":                "redis://redis-host:6379",
		"redis://:pw@h:1/3":         "redis://:pw@h:1/3",
		"rediss://user:pw@h:6390/0": "rediss://user:pw@h:6390/0",
	} {
		got, err := NormalizeURL(in)
		if err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"http://h:1", "redis://", "redis://h:1:2:3", "::"} {
		if got, err := NormalizeURL(bad); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want an error", bad, got)
		}
	}
}

func TestIsTransient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{ErrNotOwned, false},
		{ErrStillBusy, false},
		{io.EOF, true},
		{errors.New("dial tcp: connection refused"), true},
		{redis.Error("LOADING Redis is loading the dataset in memory"), true},
		{redis.Error("READONLY You can't write against a read only replica."), true},
		{redis.Error("ERR Error running script"), false},
		{redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
	} {
		if got := IsTransient(tc.err); got != tc.want {
			t.Errorf("IsTransient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
