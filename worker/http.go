package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
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
}

// HTTPHandler POSTs the raw payload to endpoint ("{sourceId}" in it is
// replaced by the payload's sourceId). A 2xx answer is success, and a JSON
// body {"message","retry","rescheduleDelay"} is honoured: retry asks for a
// retry, rescheduleDelay > 0 reschedules the job after that many seconds.
// 4xx, 5xx and connection errors are retried with exponential backoff
// (2, 4, 8 ... s) until the class's attempts are used up, then failed.
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
	client := &http.Client{Transport: transport}
	return func(ctx context.Context, job *Job) error {
		backoff := time.Duration(float64(opt.RetryBase) * math.Pow(2, float64(job.Attempt-1)))
		target := endpoint
		if strings.Contains(target, "{sourceId}") {
			var sid string
			_ = json.Unmarshal(job.Field("sourceId"), &sid)
			target = strings.ReplaceAll(target, "{sourceId}", url.PathEscape(sid))
		}
		parent := ctx
		ctx, cancel := context.WithTimeout(parent, opt.Timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(job.Payload))
		if err != nil {
			return &Error{Exception: "ResqueGo::HTTPError", Message: fmt.Sprintf("bad endpoint %q: %v", target, err), Backtrace: []string{}}
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
			return Retry(&Error{Exception: "ResqueGo::HTTPError", Message: fmt.Sprintf("POST %s: %v", target, err), Backtrace: []string{}}, backoff)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			msg := fmt.Sprintf("POST %s: %s", target, resp.Status)
			if b := strings.TrimSpace(string(body)); b != "" {
				msg += ": " + clipText(b, 300)
			}
			return Retry(&Error{Exception: "ResqueGo::HTTPError", Message: msg, Backtrace: []string{}}, backoff)
		}
		var reply httpReply
		if len(bytes.TrimSpace(body)) == 0 || json.Unmarshal(body, &reply) != nil {
			return nil // a 2xx without a JSON reply is plain success
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

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
