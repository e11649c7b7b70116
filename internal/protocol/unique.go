package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Unique job states (docs/protocol.md#unique-jobs), as the resque-v3 PHP fork writes them.
const (
	UniqueQueued  = "queued"
	UniqueRunning = "running"
)

// UniqueState is unique:<uid>:state: queued or running while a job with
// that uid is waiting or running.
func (k Keys) UniqueState(uid string) string { return k.key("unique", uid, "state") }

// UniqueDeferred is unique:<uid>:deferred: the one payload parked while the
// uid's job runs, released when it succeeds.
func (k Keys) UniqueDeferred(uid string) string { return k.key("unique", uid, "deferred") }

// UniquePrefix is "<ns>:unique:", the start of every unique key; scripts
// that learn a uid only after popping a payload build the keys from it.
func (k Keys) UniquePrefix() string { return k.key("unique", "") }

// UniqueStatePattern matches every unique:<uid>:state key (SCAN MATCH).
func (k Keys) UniqueStatePattern() string { return k.key("unique", "*", "state") }

// ParseUniqueState returns the uid of a unique:<uid>:state key.
func (k Keys) ParseUniqueState(key string) (string, bool) {
	p := k.UniquePrefix()
	if !strings.HasPrefix(key, p) || !strings.HasSuffix(key, ":state") || len(key) <= len(p)+len(":state") {
		return "", false
	}
	return key[len(p) : len(key)-len(":state")], true
}

// IsRunningState reports whether a state value means running. Later PHP
// versions write "running" followed by more (a start time): they, and
// resque-go, compare by prefix.
func IsRunningState(v string) bool { return strings.HasPrefix(v, UniqueRunning) }

// Unique is a payload's "unique" field: {"uid":"<id>","deferrableBy":<s>}.
type Unique struct {
	UID string
	// Deferrable is true when deferrableBy is present (a number >= 0).
	Deferrable   bool
	DeferrableBy int64
}

// ParseUnique reads the "unique" field of a payload. ok is false when the
// payload has none (or a null one, or one without a uid). A uid may be a
// JSON string or number (PHP producers wrote both); a number is kept as
// its literal text. A malformed field is an error; when only its
// deferrableBy is malformed, u still holds the uid and ok is true: the
// claim script has marked that uid running, and whoever ends the job must
// release it.
func ParseUnique(payload []byte) (u Unique, ok bool, err error) {
	if !bytes.Contains(payload, []byte(`"unique"`)) {
		return Unique{}, false, nil
	}
	var view struct {
		Unique json.RawMessage `json:"unique"`
	}
	if err := json.Unmarshal(payload, &view); err != nil {
		return Unique{}, false, nil // not an object: the payload check reports it
	}
	if len(view.Unique) == 0 || string(view.Unique) == "null" {
		return Unique{}, false, nil
	}
	var f struct {
		UID          json.RawMessage `json:"uid"`
		DeferrableBy json.RawMessage `json:"deferrableBy"`
	}
	if err := json.Unmarshal(view.Unique, &f); err != nil {
		return Unique{}, false, fmt.Errorf("unique field is not an object: %s", truncate(view.Unique))
	}
	if len(f.UID) == 0 || string(f.UID) == "null" {
		return Unique{}, false, nil
	}
	switch f.UID[0] {
	case '"':
		if err := json.Unmarshal(f.UID, &u.UID); err != nil {
			return Unique{}, false, fmt.Errorf("unique uid: %w", err)
		}
	default:
		var n json.Number
		if err := json.Unmarshal(f.UID, &n); err != nil {
			return Unique{}, false, fmt.Errorf("unique uid must be a string or number, got %s", truncate(f.UID))
		}
		u.UID = n.String()
	}
	if u.UID == "" {
		return Unique{}, false, nil
	}
	if len(f.DeferrableBy) > 0 && string(f.DeferrableBy) != "null" {
		var n json.Number
		if err := json.Unmarshal(f.DeferrableBy, &n); err != nil {
			return u, true, fmt.Errorf("unique deferrableBy must be a number of seconds, got %s", truncate(f.DeferrableBy))
		}
		fl, err := strconv.ParseFloat(n.String(), 64)
		if err != nil || fl < 0 {
			return u, true, fmt.Errorf("unique deferrableBy must be a number of seconds >= 0, got %s", n)
		}
		// bounded (MaxDelaySeconds): released, a larger one would make the
		// release fail at every attempt
		if err := CheckDelaySeconds("unique deferrableBy", fl); err != nil {
			return u, true, err
		}
		u.Deferrable, u.DeferrableBy = true, int64(fl)
	}
	return u, true, nil
}

func truncate(b []byte) string {
	if len(b) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut-- // not inside a character: the message stays valid UTF-8
		}
		return string(b[:cut]) + "..."
	}
	return string(b)
}

// Prefix is "<ns>:", the start of every key; a script that learns a queue
// name only from a payload it read builds that queue's keys from it.
func (k Keys) Prefix() string { return k.Namespace() + ":" }

// UniqueSweepLease is the lease of the one process that sweeps stale
// running states (unique.Sweeper), so a fleet sweeps once per interval.
func (k Keys) UniqueSweepLease() string { return k.key("resque-go", "unique_sweep_lease") }
