package schedule

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Units of rufus-scheduler's duration syntax (fugit's Fugit::Duration):
// a month is 30 days and a year 365 days. "M" and "m" are case-sensitive
// (month, minute); the other units are not.
const (
	day   = 24 * time.Hour
	week  = 7 * day
	month = 30 * day
	year  = 365 * day
)

// ParseDuration reads a duration the way resque-scheduler's `every` takes
// it (rufus-scheduler / fugit): numbers with units, optionally separated by
// spaces, commas or "and" ("30s", "5m", "1h30m", "1.5h", "2 days", "1w",
// "1M" = 30 days, "1y" = 365 days, "15mins"), a bare number of seconds
// ("90"), or ISO 8601 ("PT5M", "P1D"). The result must be a positive whole
// number of seconds.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("empty duration")
	}
	secs, ok := parseRufusDuration(in)
	if !ok {
		secs, ok = parseISODuration(strings.ToUpper(in))
	}
	if !ok {
		return 0, fmt.Errorf("%q is not a duration (want e.g. 30s, 5m, 1h, 1d, 1w or PT5M)", s)
	}
	if secs <= 0 {
		return 0, fmt.Errorf("duration %q is not positive", s)
	}
	if secs != math.Trunc(secs) || secs > float64(math.MaxInt64/int64(time.Second)) {
		return 0, fmt.Errorf("duration %q is not a whole number of seconds", s)
	}
	return time.Duration(secs) * time.Second, nil
}

// parseRufusDuration parses fugit's plain form; it returns the seconds.
func parseRufusDuration(s string) (float64, bool) {
	total, i, n := 0.0, 0, 0
	for i < len(s) {
		// separators: spaces, tabs, commas, "and"
		for i < len(s) {
			if s[i] == ' ' || s[i] == '\t' || s[i] == ',' {
				i++
			} else if n > 0 && strings.HasPrefix(strings.ToLower(s[i:]), "and") {
				i += 3
			} else {
				break
			}
		}
		if i == len(s) {
			break
		}
		sign := 1.0
		if s[i] == '+' || s[i] == '-' {
			if s[i] == '-' {
				sign = -1
			}
			i++
		}
		start := i
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		v, err := strconv.ParseFloat(s[start:i], 64)
		if err != nil {
			return 0, false
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		ustart := i
		for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
			i++
		}
		unit := s[ustart:i]
		var mult time.Duration
		switch {
		case unit == "":
			// a bare number is seconds, and only at the end
			if strings.TrimSpace(s[i:]) != "" {
				return 0, false
			}
			mult = time.Second
		case unit == "M" || unit == "month" || unit == "months":
			mult = month
		case unit == "m" || unit == "min" || unit == "mins" || unit == "minute" || unit == "minutes":
			mult = time.Minute
		default:
			switch strings.ToLower(unit) {
			case "y", "year", "years":
				mult = year
			case "w", "week", "weeks":
				mult = week
			case "d", "day", "days":
				mult = day
			case "h", "hour", "hours":
				mult = time.Hour
			case "s", "sec", "secs", "second", "seconds":
				mult = time.Second
			default:
				return 0, false
			}
		}
		total += sign * v * mult.Seconds()
		n++
	}
	return total, n > 0
}

// parseISODuration parses P[nY][nM][nW][nD][T[nH][nM][nS]].
func parseISODuration(s string) (float64, bool) {
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || rest == "" {
		return 0, false
	}
	total, inTime, n := 0.0, false, 0
	for rest != "" {
		if rest[0] == 'T' {
			if inTime {
				return 0, false
			}
			inTime, rest = true, rest[1:]
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.' || rest[i] == '-') {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, false
		}
		v, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, false
		}
		var mult time.Duration
		switch u := rest[i]; {
		case u == 'Y' && !inTime:
			mult = year
		case u == 'M' && !inTime:
			mult = month
		case u == 'W' && !inTime:
			mult = week
		case u == 'D' && !inTime:
			mult = day
		case u == 'H' && inTime:
			mult = time.Hour
		case u == 'M' && inTime:
			mult = time.Minute
		case u == 'S' && inTime:
			mult = time.Second
		default:
			return 0, false
		}
		total += v * mult.Seconds()
		rest = rest[i+1:]
		n++
	}
	return total, n > 0
}
