package protocol

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Bounds on every duration and timestamp a job carries into Redis: the
// delay of a delayed job (enqueue --in, client.In), its due time (--at,
// client.At), a unique job's deferrableBy, and the same fields in payloads
// other producers wrote. Without a bound, a value such as 9e18 seconds is
// written as a float by Lua (9.0000000000001e+18), which Redis refuses as
// an expiry or an integer: the step that meets it fails half-way, at every
// attempt.
//
// MaxDelay is 100 years: no job waits that long, and now plus it stays a
// Unix second that Lua's numbers (exact integers up to 2^53) and Redis's
// expiries (milliseconds in an int64) hold exactly, far below
// MaxTimestamp. MaxTimestamp is the last second of year 9999, the largest
// time the four-digit years of RFC 3339 and of Ruby's and PHP's time
// formats can write (resque-web and resque-scheduler show due times so).
const (
	MaxDelay        = time.Duration(MaxDelaySeconds) * time.Second
	MaxDelaySeconds = 100 * 365 * 24 * 60 * 60 // 3,153,600,000
	// MaxTimestamp is 9999-12-31T23:59:59Z in Unix seconds.
	MaxTimestamp = 253402300799
)

// ErrOutOfRange is wrapped by CheckDelay and CheckDue.
var ErrOutOfRange = fmt.Errorf("out of range")

// CheckDelay refuses a delay below zero or above MaxDelay (what names the
// value: "--in", "deferrableBy").
func CheckDelay(what string, d time.Duration) error {
	if d < 0 || d > MaxDelay {
		return fmt.Errorf("%s %v: %w: want 0 to %v (100 years)", what, d, ErrOutOfRange, MaxDelay)
	}
	return nil
}

// CheckDelaySeconds is CheckDelay for a number of seconds as a JSON
// number gives it (a float: NaN and infinities are refused too).
func CheckDelaySeconds(what string, secs float64) error {
	if math.IsNaN(secs) || secs < 0 || secs > MaxDelaySeconds {
		return fmt.Errorf("%s %s: %w: want 0 to %d seconds (100 years)", what, strconv.FormatFloat(secs, 'f', -1, 64), ErrOutOfRange, MaxDelaySeconds)
	}
	return nil
}

// CheckDue refuses a due time after MaxTimestamp or before the Unix epoch.
func CheckDue(what string, t time.Time) error {
	if u := t.Unix(); u < 0 || u > MaxTimestamp || u == MaxTimestamp && t.Nanosecond() > 0 {
		return fmt.Errorf("%s %s: %w: want a time from 1970 to the end of year 9999", what, t.UTC().Format(time.RFC3339), ErrOutOfRange)
	}
	return nil
}

// checkUnique refuses a unique field whose deferrableBy is out of range.
func checkUnique(u Unique) error {
	if u.UID != "" && u.Deferrable {
		if err := CheckDelaySeconds("deferrableBy", float64(u.DeferrableBy)); err != nil {
			return fmt.Errorf("protocol: %w", err)
		}
	}
	return nil
}
