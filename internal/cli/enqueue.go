package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/tracing"
	"github.com/resque-go/resque-go/internal/uniqueio"
	"github.com/resque-go/resque-go/unique"
)

func enqueueCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "enqueue",
		Usage:     "push a job onto a queue",
		UsageText: "resque-go enqueue --queue mail --class MailJob --args '[1,\"two\"]' [--at TIME | --in DURATION] [--unique-id U [--deferrable-by SECONDS]] [--after ID[,ID...]] [--after-group G] [--on-parent-failure fail|run|drop] [--group G]",
		Description: "Prints the payload written (a delayed or deferred job: the delayed item).\n" +
			"--at/--in file the job in the delayed queue (resque-scheduler's layout); a mover (every\n" +
			"`resque-go work`, or resque-scheduler) pushes it to its queue when due. The delayed item is\n" +
			"written byte-identical to resque-scheduler's enqueue_at ({\"class\",\"args\",\"queue\"}, no id),\n" +
			"so resque-scheduler's remove_delayed and resque-web's \"Cancel Job\" find it; --with-id adds an\n" +
			"id and queue_time, at a cost: Ruby's tools (and `delayed remove --args` without --scan) no\n" +
			"longer find it.\n" +
			"--unique-id: at most one job with that id is queued or running. When one is, the\n" +
			"enqueue is refused with exit code 3 and writes nothing; with --deferrable-by and that\n" +
			"job running, this job is parked instead (exit 0, \"deferred\" on stderr) and enqueued\n" +
			"SECONDS after that job succeeds.\n" + enqueueDepsHelp,
		Flags: append(append(redisFlags(),
			&ucli.StringFlag{Name: "queue", Usage: "queue name", Required: true},
			&ucli.StringFlag{Name: "class", Usage: "job class", Required: true},
			&ucli.StringFlag{Name: "args", Usage: "JSON args: an array (one element per argument), or an object (kept as is, as php-resque and resque-v3 write it)", Value: "[]"},
			&ucli.BoolFlag{Name: "plain", Usage: "write only class and args, byte-identical to Ruby's Resque.enqueue (args must be an array)"},
			&ucli.BoolFlag{Name: "with-id", Usage: "with --at/--in: give the delayed job an id and queue_time (resque-scheduler's remove_delayed and resque-web's Cancel Job then cannot find it)"},
			&ucli.StringFlag{Name: "at", Usage: "run at `TIME` (RFC 3339, e.g. 2026-12-01T08:00:00Z, or Unix seconds; 1970 to the end of 9999) through the delayed queue"},
			&ucli.StringFlag{Name: "in", Usage: "run after `DURATION` (90s, 5m, 2h; at most 100 years, 876000h) through the delayed queue"},
			&ucli.StringFlag{Name: "unique-id", Usage: "make the job unique under `UID` (refused with exit code 3 while a job with it is queued or running)"},
			&ucli.StringSliceFlag{Name: "tag", Usage: "tag the job with `TAG` (repeatable, at most 16): an extra payload field, and the job's id in the tag's index until the job ends (job list --tag)"},
			&ucli.BoolFlag{Name: "events", Usage: "append the job's enqueued event to the events stream (<ns>:resque-go:events), in the same step as the push (with --after: and its released event when its parents have all succeeded)"},
			&ucli.StringFlag{Name: "deferrable-by", Usage: "with --unique-id: when the uid's job is running, park this job and enqueue it `SECONDS` (at most 3153600000, 100 years) after that job succeeds"},
		), enqueueDepsFlags()...),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usagef("enqueue takes no arguments (got %q); give the job's arguments as --args '[...]'", c.Args().First())
			}
			queue, class := c.String("queue"), c.String("class")
			if queue == "" || class == "" {
				return usagef("enqueue needs --queue and --class")
			}
			if err := protocol.ValidateQueueName(queue); err != nil {
				return usageError{err}
			}
			args := bytes.TrimSpace([]byte(c.String("args")))
			if err := checkArgs(args, c.Bool("plain")); err != nil {
				return err
			}
			due, err := enqueueDue(c)
			if err != nil {
				return err
			}
			u, err := enqueueUnique(c)
			if err != nil {
				return err
			}
			if c.Bool("plain") && c.Bool("with-id") {
				return usagef("--plain writes only class and args: it takes no --with-id")
			}
			// a delayed job is written as resque-scheduler writes it unless
			// --with-id asks for an id
			plain := c.Bool("plain") || !due.IsZero() && u.UID == "" && !c.Bool("with-id")
			deps, parents, err := enqueueDeps(c)
			if err != nil {
				return err
			}
			held := deps.Group != "" || len(parents) > 0
			if held && (c.Bool("plain") || !due.IsZero() || u.UID != "") {
				return usagef("--after, --after-group and --group do not go with --plain, --at, --in or --unique-id")
			}
			eo := protocol.EnqueueOptions{Plain: plain, Unique: u, Tags: c.StringSlice("tag"), Deps: deps}
			tracked := len(eo.Tags) > 0 || c.Bool("events")
			if tracked && (u.UID != "" || !due.IsZero() || c.Bool("plain")) {
				return usagef("--tag and --events go with an immediate enqueue: not with --at, --in, --unique-id or --plain")
			}
			if tracked {
				eo.ID = protocol.NewJobID() // the indexes' member
			}
			if !plain {
				end, err := traceEnqueue(c, &eo, queue, class)
				if err != nil {
					return err
				}
				defer end()
			}
			payload, err := protocol.NewPayload(class, args, eo)
			if err != nil {
				return usageError{err}
			}
			client, err := newClient(c)
			if err != nil {
				return err
			}
			defer client.Close()
			written := payload
			switch {
			case held:
				if err := enqueueHeld(c, client, queue, payload, deps, parents, c.Bool("events"), eo.Tags); err != nil {
					return err
				}
			case u.UID != "":
				res, err := uniqueio.Enqueue(c.Context, client, unique.Job{Queue: queue, Payload: payload, DueAt: due})
				if err != nil {
					return err
				}
				if !due.IsZero() || res == unique.Deferred {
					written, _ = protocol.DelayedItem(payload, queue)
				}
				if res == unique.Deferred {
					fmt.Fprintf(c.App.ErrWriter, "deferred: the job with unique id %q is running; this one is enqueued %ds after it succeeds\n", u.UID, u.DeferrableBy)
				}
			case !due.IsZero():
				if err := delayedio.EnqueueAt(c.Context, client, queue, payload, due); err != nil {
					return err
				}
				written, _ = protocol.DelayedItem(payload, queue)
			case tracked:
				if err := client.EnqueueTracked(c.Context, rdb.TrackedJob{Queue: queue, Class: class, ID: eo.ID, Payload: payload,
					Tags: eo.Tags, Event: c.Bool("events")}); err != nil {
					return err
				}
			default:
				if err := client.Enqueue(c.Context, queue, payload); err != nil {
					return err
				}
			}
			fmt.Fprintln(c.App.Writer, string(written))
			return nil
		},
	}
}

// enqueueDue reads --at and --in: zero when neither is given.
func enqueueDue(c *ucli.Context) (time.Time, error) {
	at, in := c.String("at"), c.String("in")
	switch {
	case at != "" && in != "":
		return time.Time{}, usagef("give --at or --in, not both")
	case at != "":
		t, err := time.Parse(time.RFC3339, at)
		if secs, ierr := strconv.ParseInt(at, 10, 64); ierr == nil {
			t, err = time.Unix(secs, 0), nil
		}
		if err != nil {
			return time.Time{}, usagef("--at %q: want RFC 3339 (2026-12-01T08:00:00Z) or Unix seconds", at)
		}
		if protocol.CheckDue("--at", t) != nil {
			return time.Time{}, usagef("--at %q: out of range: want a time from 1970 to the end of year 9999", at)
		}
		return t, nil
	case in != "":
		d, err := time.ParseDuration(in)
		if err != nil || d < 0 {
			return time.Time{}, usagef("--in %q: want a duration such as 90s, 5m or 2h", in)
		}
		if protocol.CheckDelay("--in", d) != nil {
			return time.Time{}, usagef("--in %q: out of range: want at most 100 years (%v)", in, protocol.MaxDelay)
		}
		return time.Now().Add(d), nil
	}
	return time.Time{}, nil
}

// enqueueUnique reads --unique-id and --deferrable-by.
func enqueueUnique(c *ucli.Context) (protocol.Unique, error) {
	u := protocol.Unique{UID: c.String("unique-id")}
	d := c.String("deferrable-by")
	if c.IsSet("unique-id") && u.UID == "" {
		return u, usagef("--unique-id is empty")
	}
	// the uid travels in the payload ("unique"), which --plain leaves out
	if u.UID != "" && c.Bool("plain") {
		return u, usagef("--plain writes only class and args: it takes no --unique-id")
	}
	if d == "" {
		return u, nil
	}
	if u.UID == "" {
		return u, usagef("--deferrable-by needs --unique-id")
	}
	secs, err := strconv.ParseInt(d, 10, 64)
	if err != nil || secs < 0 || secs > protocol.MaxDelaySeconds {
		return u, usagef("--deferrable-by %q: want whole seconds from 0 to %d (100 years)", d, protocol.MaxDelaySeconds)
	}
	u.Deferrable, u.DeferrableBy = true, secs
	return u, nil
}

// checkArgs accepts a JSON array, or an object unless plain: Ruby's
// Resque.enqueue always writes an array, and a lone value such as 5 is
// ambiguous (one argument 5, or a typo), so it is refused with the fix.
func checkArgs(args []byte, plain bool) error {
	if len(args) == 0 || !json.Valid(args) {
		return nil // NewPayload reports invalid JSON; empty means []
	}
	switch {
	case args[0] == '[':
		return nil
	case args[0] == '{' && !plain:
		return nil
	case args[0] == '{':
		return usagef("--plain writes args as Ruby's Resque.enqueue does, always an array: pass the object as one argument, --args '[%s]'", clip(string(args), 200))
	}
	return usagef("--args '%s': want a JSON array of arguments (or an object); for one argument write --args '[%s]'", clip(string(args), 200), clip(string(args), 200))
}

// traceEnqueue sets the trace context of the job: the span of TRACEPARENT
// (and TRACESTATE) in the environment, as a calling script passes it, or,
// with tracing on (OTEL_* environment), a producer span of its own under
// it. The returned function ends and flushes that span.
func traceEnqueue(c *ucli.Context, eo *protocol.EnqueueOptions, queue, class string) (func(), error) {
	ctx := tracing.FromEnvCarrier(c.Context, os.Getenv)
	tp, err := tracerFromEnv(ctx, c.App.ErrWriter)
	if err != nil {
		return nil, err
	}
	end := func() {}
	if tp != nil {
		var endSpan func()
		ctx, endSpan = tracing.StartSend(ctx, tp, queue, class)
		end = func() { endSpan(); shutdownTracer(tp) }
	}
	eo.Traceparent, eo.Tracestate = tracing.Inject(ctx)
	return end, nil
}
