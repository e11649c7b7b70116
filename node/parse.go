package node

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/worker"
)

// Heartbeat bounds. Heartbeats are stored with one-second resolution, so a
// shorter interval only adds writes; Ruby Resque workers prune an id whose
// heartbeat is older than 300 s (Resque.prune_interval, 5 of its 60 s
// beats), so beating at most every 60 s leaves the same margin of 5 missed
// beats before a Ruby worker takes a live resque-go worker for dead.
const (
	minHeartbeat     = time.Second
	maxHeartbeat     = 60 * time.Second
	defaultHeartbeat = 5 * time.Second
)

// durations are the Config's durations parsed; 0 leaves the worker's
// default.
type durations struct {
	interval, jobTimeout, termTimeout, heartbeat time.Duration
}

func (c Config) parseDurations() (durations, error) {
	d := durations{interval: c.Interval, jobTimeout: c.JobTimeout, termTimeout: c.TermTimeout, heartbeat: c.HeartbeatInterval}
	for _, f := range []struct {
		field string
		d     time.Duration
	}{
		{"Interval", c.Interval}, {"JobTimeout", c.JobTimeout}, {"HeartbeatInterval", c.HeartbeatInterval},
		{"HTTPConnectTimeout", c.HTTPConnectTimeout}, {"HTTPTimeout", c.HTTPTimeout},
	} {
		if f.d < 0 {
			return d, badf("node: Config.%s %s: must not be negative", f.field, f.d)
		}
	}
	if c.Drain && c.Interval != 0 {
		return d, badf("node: Config.Drain works until the queues are empty: it takes no Config.Interval (%s)", c.Interval)
	}
	if d.termTimeout < 0 {
		// Ruby's TERM_TIMEOUT=0: take running jobs back at once (the
		// runtime reads a negative timeout so; 0 is its default)
		d.termTimeout = -1
	}
	if d.heartbeat == 0 {
		d.heartbeat = defaultHeartbeat
	} else if d.heartbeat < minHeartbeat || d.heartbeat > maxHeartbeat {
		return d, badf("node: Config.HeartbeatInterval %s: want 1 to 60 seconds (heartbeats are stored to the second; Ruby Resque prunes a worker whose heartbeat is 300 s old)",
			c.HeartbeatInterval)
	}
	return d, nil
}

// maxSeconds keeps parsed seconds inside time.Duration (about 292 years).
const maxSeconds = float64(math.MaxInt64/int64(time.Second)) - 1

// ParseSeconds reads Ruby-style seconds ("5", "0.5") or a Go duration
// ("250ms"), the form of every duration setting; "" is 0. flag names the
// setting in messages (as --flag). Its errors match ErrConfig.
func ParseSeconds(flag, v string) (time.Duration, error) { return parseSeconds("--"+flag, v) }

// parseSeconds is ParseSeconds with the setting named in messages as name
// says ("--interval", "node: Config.Interval").
func parseSeconds(name, v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 {
			return 0, badf("%s %q: must not be negative", name, v)
		}
		if math.IsNaN(f) || f > maxSeconds {
			return 0, badf("%s %q: want seconds (5, 0.5) or a duration (250ms, 2m)", name, v)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, badf("%s %q: want seconds (5, 0.5) or a duration (250ms, 2m)", name, v)
	}
	return d, nil
}

// retryPolicies are the default retry policy and the per-class ones.
type retryPolicies struct {
	def     worker.RetryPolicy
	classes map[string]worker.RetryPolicy
}

// parseRetry reads FailRetries, RetryBackoff and ClassRetry.
func (c Config) parseRetry() (retryPolicies, error) {
	var r retryPolicies
	n := c.FailRetries
	if n == 0 {
		n = worker.DefaultMaxAttempts
	}
	if n < 1 {
		return r, badf("node: Config.FailRetries %d: want 1 or more (1 never retries)", n)
	}
	b, err := parseBackoff(c.RetryBackoff)
	if err != nil {
		return r, badf("node: Config.RetryBackoff: %v", err)
	}
	r.def = worker.RetryPolicy{MaxAttempts: n, Backoff: b}
	r.classes = map[string]worker.RetryPolicy{}
	for _, spec := range c.ClassRetry {
		class, rest, ok := strings.Cut(spec, "=")
		if !ok || strings.TrimSpace(class) == "" {
			return r, badf("node: Config.ClassRetry %q: want 'Class=ATTEMPTS[:BACKOFF]'", spec)
		}
		attempts, backoff, _ := strings.Cut(rest, ":")
		p := worker.RetryPolicy{Backoff: r.def.Backoff}
		if p.MaxAttempts, err = strconv.Atoi(attempts); err != nil || p.MaxAttempts < 1 {
			return r, badf("node: Config.ClassRetry %q: attempts %q is not a whole number >= 1", spec, attempts)
		}
		if backoff != "" {
			if p.Backoff, err = parseBackoff(backoff); err != nil {
				return r, badf("node: Config.ClassRetry %q: %v", spec, err)
			}
		}
		r.classes[strings.TrimSpace(class)] = p
	}
	return r, nil
}

// ParseBackoff reads a retry delay as --retry-backoff does (the pool
// checks its files with it); its errors match ErrConfig.
func ParseBackoff(s string) (worker.Backoff, error) { return parseBackoff(s) }

// parseBackoff reads a retry delay: "none" (or ""), "fixed:D", or
// "exp:BASE[:MAX[:JITTER]]"; D, BASE and MAX are Go durations or seconds,
// JITTER is 0 to 1.
func parseBackoff(s string) (worker.Backoff, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	dur := func(i int) (time.Duration, error) {
		d, err := time.ParseDuration(parts[i])
		if err != nil || d < 0 {
			if f, ferr := strconv.ParseFloat(parts[i], 64); ferr == nil && f >= 0 {
				return time.Duration(f * float64(time.Second)), nil
			}
			return 0, badf("backoff %q: %q is not a duration", s, parts[i])
		}
		return d, nil
	}
	var b worker.Backoff
	var err error
	switch {
	case parts[0] == "none" || parts[0] == "":
		if len(parts) > 1 {
			return b, badf("backoff %q: none takes no value", s)
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
				err = badf("backoff %q: jitter must be between 0 and 1", s)
			}
		}
	default:
		return b, badf("backoff %q: want none, fixed:30s or exp:BASE[:MAX[:JITTER]]", s)
	}
	return b, err
}

// handlerSpec is one Exec or HTTP entry parsed.
type handlerSpec struct {
	class, target string
	http          bool
}

// handlerSpecs are the Exec and HTTP entries with the HTTP options.
type handlerSpecs struct {
	specs []handlerSpec
	http  worker.HTTPOptions
}

// parseHandlers reads Exec, HTTP and the HTTP options.
func (c Config) parseHandlers() (handlerSpecs, error) {
	var h handlerSpecs
	if c.HTTPConnectTimeout < 0 || c.HTTPTimeout < 0 {
		return h, badf("node: Config.HTTPConnectTimeout %s, Config.HTTPTimeout %s: must not be negative", c.HTTPConnectTimeout, c.HTTPTimeout)
	}
	h.http = worker.HTTPOptions{Token: c.HTTPToken, ConnectTimeout: c.HTTPConnectTimeout, Timeout: c.HTTPTimeout}
	cut := func(field, spec string) (handlerSpec, error) {
		class, target, ok := strings.Cut(spec, "=")
		class, target = strings.TrimSpace(class), strings.TrimSpace(target)
		if !ok || class == "" || target == "" {
			return handlerSpec{}, badf("node: Config.%s %q: want 'Class=...' or '*=...'", field, spec)
		}
		return handlerSpec{class: class, target: target, http: field == "HTTP"}, nil
	}
	for _, spec := range c.Exec {
		s, err := cut("Exec", spec)
		if err != nil {
			return h, err
		}
		h.specs = append(h.specs, s)
	}
	for _, spec := range c.HTTP {
		_, target, _ := strings.Cut(spec, "=")
		if t := strings.TrimSpace(target); t != "" && !strings.HasPrefix(t, "http://") && !strings.HasPrefix(t, "https://") {
			return h, badf("node: Config.HTTP %q: the URL must start with http:// or https://", spec)
		}
		s, err := cut("HTTP", spec)
		if err != nil {
			return h, err
		}
		if err := worker.CheckHTTPEndpoint(s.target); err != nil {
			return h, badf("node: Config.HTTP %q: %v", spec, err)
		}
		h.specs = append(h.specs, s)
	}
	return h, nil
}

// register adds the handlers to reg: "*" becomes the fallback.
func (h handlerSpecs) register(reg *worker.Registry) {
	for _, s := range h.specs {
		var fn worker.HandlerFunc
		if s.http {
			fn = worker.HTTPHandler(s.target, h.http)
		} else {
			fn = worker.ExecHandler(s.target, worker.ExecOptions{})
		}
		if s.class == "*" {
			reg.SetFallback(fn)
		} else {
			reg.Register(s.class, fn)
		}
	}
}

// AddHandlers registers c's Exec and HTTP handlers in reg ("*" as its
// fallback), after checking them as Validate does. New does this itself;
// a fork-mode job process (run-job) needs only this.
func (c Config) AddHandlers(reg *worker.Registry) error {
	h, err := c.parseHandlers()
	if err != nil {
		return err
	}
	h.register(reg)
	return nil
}
