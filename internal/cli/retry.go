package cli

import (
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/worker"
)

// retryPolicies reads --fail-retries, --retry-backoff and --class-retry.
func retryPolicies(c *ucli.Context) (worker.RetryPolicy, map[string]worker.RetryPolicy, error) {
	n := c.Int("fail-retries")
	if n < 1 {
		return worker.RetryPolicy{}, nil, usagef("--fail-retries %d: want 1 or more (1 never retries)", n)
	}
	b, err := parseBackoff(c.String("retry-backoff"))
	if err != nil {
		return worker.RetryPolicy{}, nil, usagef("--retry-backoff: %v", err)
	}
	def := worker.RetryPolicy{MaxAttempts: n, Backoff: b}
	classes := map[string]worker.RetryPolicy{}
	for _, spec := range c.StringSlice("class-retry") {
		class, rest, ok := strings.Cut(spec, "=")
		if !ok || strings.TrimSpace(class) == "" {
			return def, nil, usagef("--class-retry %q: want 'Class=ATTEMPTS[:BACKOFF]'", spec)
		}
		attempts, backoff, _ := strings.Cut(rest, ":")
		p := worker.RetryPolicy{Backoff: def.Backoff}
		if p.MaxAttempts, err = strconv.Atoi(attempts); err != nil || p.MaxAttempts < 1 {
			return def, nil, usagef("--class-retry %q: attempts %q is not a whole number >= 1", spec, attempts)
		}
		if backoff != "" {
			if p.Backoff, err = parseBackoff(backoff); err != nil {
				return def, nil, usagef("--class-retry %q: %v", spec, err)
			}
		}
		classes[strings.TrimSpace(class)] = p
	}
	return def, classes, nil
}

// parseBackoff reads none, fixed:D, or exp:BASE[:MAX[:JITTER]].
func parseBackoff(s string) (worker.Backoff, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	dur := func(i int) (time.Duration, error) {
		d, err := time.ParseDuration(parts[i])
		if err != nil || d < 0 {
			if f, ferr := strconv.ParseFloat(parts[i], 64); ferr == nil && f >= 0 {
				return time.Duration(f * float64(time.Second)), nil
			}
			return 0, usagef("backoff %q: %q is not a duration", s, parts[i])
		}
		return d, nil
	}
	var b worker.Backoff
	var err error
	switch {
	case parts[0] == "none" || parts[0] == "":
		if len(parts) > 1 {
			return b, usagef("backoff %q: none takes no value", s)
		}
	case parts[0] == "fixed" && len(parts) == 2:
		b.Base, err = dur(1)
	case parts[0] == "exp" && len(parts) >= 2 && len(parts) <= 4:
		b.Exponential = true
		if b.Base, err = dur(1); err == nil && len(parts) >= 3 {
			b.Max, err = dur(2)
		}
		if err == nil && len(parts) == 4 {
			b.Jitter, err = strconv.ParseFloat(parts[3], 64)
			if err == nil && (b.Jitter < 0 || b.Jitter > 1) {
				err = usagef("backoff %q: jitter must be between 0 and 1", s)
			}
		}
	default:
		return b, usagef("backoff %q: want none, fixed:30s or exp:BASE[:MAX[:JITTER]]", s)
	}
	return b, err
}
