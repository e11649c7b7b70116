package worker

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HTTPOptions configures HTTPHandler. Zero values mean the defaults.
type HTTPOptions struct {
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// ConnectTimeout defaults to 5 s; Timeout (the whole request) to 30 s.
	ConnectTimeout time.Duration
	Timeout        time.Duration
	// RetryBase is the first delay of the retry backoff after a failed
	// request (doubling per attempt: 2, 4, 8 ... s); default 2 s.
	RetryBase time.Duration
	// Transport overrides the HTTP transport (tests).
	Transport http.RoundTripper
}

// httpReply is the optional JSON body of a 2xx answer.
type httpReply struct {
	Message         string   `json:"message"`
	Retry           bool     `json:"retry"`
	RescheduleDelay *float64 `json:"rescheduleDelay"`
	RateLimited     *float64 `json:"rate_limited"`
}

// HTTPHandler POSTs the raw payload to endpoint ("{sourceId}" in its path
// is replaced by the payload's sourceId, see CheckHTTPEndpoint). A 2xx
// answer is success, and a JSON body {"message","retry","rescheduleDelay"}
// is honoured: retry asks for a retry, rescheduleDelay > 0 reschedules the
// job after that many seconds, rate_limited (seconds) puts it back as
// RateLimited does. A 429 answer is RateLimited too, after its Retry-After
// (seconds or an HTTP date; DefaultRateLimitDelay without one). Other
// 4xx, 5xx and connection errors are retried
// with exponential backoff (2, 4, 8 ... s) until the class's attempts are
// used up, then failed. A job whose placeholder value cannot fill its path
// segment fails as ResqueGo::HTTPPlaceholder without a request.
func HTTPHandler(endpoint string, opt HTTPOptions) HandlerFunc {
	if opt.ConnectTimeout <= 0 {
		opt.ConnectTimeout = 5 * time.Second
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 30 * time.Second
	}
	if opt.RetryBase <= 0 {
		opt.RetryBase = 2 * time.Second
	}
	transport := opt.Transport
	if transport == nil {
		transport = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: opt.ConnectTimeout}).DialContext,
			TLSHandshakeTimeout: opt.ConnectTimeout,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	configured, badEndpoint := endpointOrigin(endpoint)
	client := &http.Client{Transport: transport, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		// the payload (and, within the same domain, the token) would
		// follow a redirect: only to the configured host, and not forever
		if req.URL.Scheme+"://"+req.URL.Host != configured || len(via) >= 10 {
			return http.ErrUseLastResponse // a 3xx answer: retried, then failed
		}
		return nil
	}}
	if badEndpoint != nil {
		badEndpoint = &Error{Exception: "ResqueGo::HTTPError", Message: fmt.Sprintf("bad endpoint %q: %v", redactURL(endpoint), badEndpoint), Backtrace: []string{}}
	}
	return func(ctx context.Context, job *Job) error {
		if badEndpoint != nil {
			return badEndpoint
		}
		backoff := time.Duration(float64(opt.RetryBase) * math.Pow(2, float64(job.Attempt-1)))
		target, err := fillEndpoint(endpoint, job)
		if err != nil {
			return &Error{Exception: "ResqueGo::HTTPPlaceholder", Message: err.Error(), Backtrace: []string{}}
		}
		u, err := url.Parse(target)
		if err == nil && u.Scheme+"://"+u.Host != configured {
			// not reached: a filled placeholder stays in its path segment
			err = fmt.Errorf("the request would go to %s, not %s", u.Scheme+"://"+u.Host, configured)
		}
		if err != nil {
			return &Error{Exception: "ResqueGo::HTTPError", Message: fmt.Sprintf("bad endpoint %q: %v", redactURL(endpoint), err), Backtrace: []string{}}
		}
		shown := u.Redacted()
		parent := ctx
		ctx, cancel := context.WithTimeout(parent, opt.Timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(job.Payload))
		if err != nil {
			return &Error{Exception: "ResqueGo::HTTPError", Message: fmt.Sprintf("bad endpoint %q: %v", shown, err), Backtrace: []string{}}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "resque-go")
		if opt.Token != "" {
			req.Header.Set("Authorization", "Bearer "+opt.Token)
		}
		resp, err := client.Do(req)
		if err != nil {
			if parent.Err() != nil {
				return err // the job was cancelled (stop, USR1, --timeout): not an endpoint failure
			}
			return Retry(&Error{Exception: "ResqueGo::HTTPError", Message: fmt.Sprintf("POST %s: %v", shown, err), Backtrace: []string{}}, backoff)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode == http.StatusTooManyRequests {
			return RateLimited(retryAfter(resp.Header.Get("Retry-After"), time.Now()))
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			msg := fmt.Sprintf("POST %s: %s", shown, resp.Status)
			if b := strings.TrimSpace(string(body)); b != "" {
				msg += ": " + clipText(b, 300)
			}
			return Retry(&Error{Exception: "ResqueGo::HTTPError", Message: msg, Backtrace: []string{}}, backoff)
		}
		var reply httpReply
		if len(bytes.TrimSpace(body)) == 0 || json.Unmarshal(body, &reply) != nil {
			return nil // a 2xx without a JSON reply is plain success
		}
		if reply.RateLimited != nil {
			return RateLimited(seconds(*reply.RateLimited))
		}
		if reply.RescheduleDelay != nil && *reply.RescheduleDelay > 0 {
			return Reschedule(time.Duration(*reply.RescheduleDelay * float64(time.Second)))
		}
		if reply.Retry {
			msg := reply.Message
			if msg == "" {
				msg = "endpoint asked for a retry"
			}
			return Retry(&Error{Exception: "ResqueGo::HTTPRetry", Message: msg, Backtrace: []string{}}, backoff)
		}
		return nil
	}
}

// retryAfter reads a Retry-After header (RFC 9110: delay seconds or an
// HTTP date) as a delay from now; 0 (the default delay) when it has none
// or cannot be read.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return max(seconds(n), time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		// a date in the past still waits a second, not the default
		return max(t.Sub(now), time.Second)
	}
	return 0
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// sourceIDPlaceholder in an HTTP endpoint's path is replaced by the
// payload's sourceId (resque-v3's mass-queue tenant).
const sourceIDPlaceholder = "{sourceId}"

// placeholderProbe stands in for a placeholder while an endpoint is
// checked: a value that is valid in every part of a URL.
const placeholderProbe = "resquegoplaceholder"

// CheckHTTPEndpoint reports whether endpoint can be given to HTTPHandler:
// an http:// or https:// URL with a host, whose placeholders ("{sourceId}")
// stand only in its path, where each value fills one path segment. In the
// host, the user info, the query or the fragment a value could send the
// request (and its bearer token) elsewhere or change its parameters.
func CheckHTTPEndpoint(endpoint string) error {
	u, err := url.Parse(strings.ReplaceAll(endpoint, sourceIDPlaceholder, placeholderProbe))
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want an http:// or https:// URL with a host")
	}
	for _, part := range []string{u.User.String(), u.Host, u.RawQuery, u.Fragment} {
		if strings.Contains(part, placeholderProbe) {
			return fmt.Errorf("%s may stand only in the URL's path", sourceIDPlaceholder)
		}
	}
	return nil
}

// endpointOrigin is "scheme://host" of endpoint, the only place its
// requests may go, or CheckHTTPEndpoint's error.
func endpointOrigin(endpoint string) (string, error) {
	if err := CheckHTTPEndpoint(endpoint); err != nil {
		return "", err
	}
	u, _ := url.Parse(strings.ReplaceAll(endpoint, sourceIDPlaceholder, placeholderProbe))
	return u.Scheme + "://" + u.Host, nil
}

// fillEndpoint replaces the placeholders of endpoint with the job's
// values, each escaped to stay one path segment. A value that is missing,
// not a string, empty, "." or ".." (which would name another path) is an
// error naming the placeholder.
func fillEndpoint(endpoint string, job *Job) (string, error) {
	if !strings.Contains(endpoint, sourceIDPlaceholder) {
		return endpoint, nil
	}
	raw := job.Field("sourceId")
	var v string
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return "", fmt.Errorf("%s: the payload's sourceId is %s, want a string", sourceIDPlaceholder, clipText(cmp.Or(string(raw), "missing"), 100))
	}
	if v == "" || v == "." || v == ".." {
		return "", fmt.Errorf("%s: the payload's sourceId %q cannot be a path segment", sourceIDPlaceholder, v)
	}
	return strings.ReplaceAll(endpoint, sourceIDPlaceholder, url.PathEscape(v)), nil
}

// redactURL is an endpoint with any password masked, for messages.
func redactURL(endpoint string) string {
	u, err := url.Parse(strings.ReplaceAll(endpoint, sourceIDPlaceholder, placeholderProbe))
	if err != nil {
		return "(unparsable URL)"
	}
	return strings.ReplaceAll(u.Redacted(), placeholderProbe, sourceIDPlaceholder)
}
