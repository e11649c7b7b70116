package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/worker"
)

// Resolve finds a job's handler by class, then by a Rails wrapper's
// job_class, then the fallback, wrapped in the middleware (the first added
// outermost); without any it is ResqueGo::NoHandler. Call turns a panic into
// ResqueGo::Panic.
func TestResolveAndCall(t *testing.T) {
	t.Parallel()
	reg := worker.NewRegistry()
	var trace []string
	reg.Register("Mail", func(ctx context.Context, j *worker.Job) error { trace = append(trace, "Mail"); return nil })
	reg.Register("InnerJob", func(ctx context.Context, j *worker.Job) error { trace = append(trace, "InnerJob"); return nil })
	reg.Register("Boom", func(ctx context.Context, j *worker.Job) error { panic("boom") })
	for _, name := range []string{"outer", "inner"} {
		reg.Use(func(next worker.HandlerFunc) worker.HandlerFunc {
			return func(ctx context.Context, j *worker.Job) error {
				trace = append(trace, name)
				return next(ctx, j)
			}
		})
	}
	run := func(j *worker.Job) error {
		t.Helper()
		h, err := reg.Resolve(j)
		if err != nil {
			return err
		}
		return worker.Call(context.Background(), h, j)
	}
	if err := run(&worker.Job{Class: "Mail"}); err != nil || !slices.Equal(trace, []string{"outer", "inner", "Mail"}) {
		t.Errorf("Mail: %v, trace %v", err, trace)
	}
	trace = nil
	wrapped := &worker.Job{Class: protocol.ActiveJobWrapper, Args: json.RawMessage(`[{"job_class":"InnerJob"}]`)}
	if err := run(wrapped); err != nil || !slices.Equal(trace, []string{"outer", "inner", "InnerJob"}) {
		t.Errorf("ActiveJob wrapper: %v, trace %v", err, trace)
	}
	var we *worker.Error
	if err := run(&worker.Job{Class: "Nope"}); !errors.As(err, &we) || we.Exception != protocol.ExcNoHandler || !strings.Contains(we.Message, `"Nope"`) {
		t.Errorf("unknown class: %v", err)
	}
	if err := run(&worker.Job{Class: "Boom"}); !errors.As(err, &we) || we.Exception != "ResqueGo::Panic" || we.Message != "boom" || len(we.Backtrace) == 0 {
		t.Errorf("panic: %v", err)
	}
	reg.SetFallback(func(ctx context.Context, j *worker.Job) error { trace = append(trace, "fallback"); return nil })
	trace = nil
	if err := run(&worker.Job{Class: "Nope"}); err != nil || !slices.Equal(trace, []string{"outer", "inner", "fallback"}) {
		t.Errorf("fallback: %v, trace %v", err, trace)
	}
}

type customErr struct{}

func (customErr) Error() string { return "custom" }

// Describe names errors as failed entries show them.
func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err       error
		exc, msg  string
		backtrace []string
	}{
		{errors.New("plain"), "Error", "plain", []string{}},
		{fmt.Errorf("wrapped: %w", customErr{}), "Error", "wrapped: custom", []string{}},
		{customErr{}, "worker_test.customErr", "custom", []string{}},
		{&customErr{}, "worker_test.customErr", "custom", []string{}},
		{&worker.Error{Exception: "ArgumentError", Message: "bad", Backtrace: []string{"a.rb:1"}}, "ArgumentError", "bad", []string{"a.rb:1"}},
		{fmt.Errorf("ctx: %w", &worker.Error{Exception: "E", Message: "m"}), "E", "m", []string{}},
	} {
		exc, msg, bt := worker.Describe(c.err)
		if exc != c.exc || msg != c.msg || !slices.Equal(bt, c.backtrace) || bt == nil {
			t.Errorf("Describe(%v) = %q, %q, %q; want %q, %q, %q", c.err, exc, msg, bt, c.exc, c.msg, c.backtrace)
		}
	}
}

// NewJob gives a handler the payload's other fields.
func TestNewJobFields(t *testing.T) {
	t.Parallel()
	j := worker.NewJob(worker.Job{Class: "C"}, map[string]json.RawMessage{"sourceId": json.RawMessage(`"s1"`)})
	if got := string(j.Field("sourceId")); got != `"s1"` || j.Class != "C" || j.Field("nope") != nil {
		t.Errorf("Field = %s, job %+v", got, j)
	}
	if (&worker.Job{}).Field("x") != nil {
		t.Error("a Job without fields has one")
	}
}
