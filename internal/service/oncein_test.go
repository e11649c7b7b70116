package service

import (
	"testing"
	"time"
)

func TestOnceIn(t *testing.T) {
	var o OnceIn
	t0 := time.Unix(1000, 0)
	if !o.Due("a", t0) || o.Due("a", t0.Add(59*time.Second)) || !o.Due("b", t0.Add(time.Second)) {
		t.Fatal("a key is reported once a minute, each key on its own")
	}
	if !o.Due("a", t0.Add(time.Minute)) {
		t.Fatal("a key is reported again after a minute")
	}
	if !o.Due("c", t0) || !o.Due("c", t0.Add(-time.Second)) {
		t.Fatal("a clock that went back reports again")
	}
}
