package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/internal/statsio"
	"github.com/resque-go/resque-go/stats"
)

// clearScreen moves the cursor home and clears the terminal (ANSI), so that
// --watch redraws in place.
const clearScreen = "\x1b[H\x1b[2J"

func statsCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "stats",
		Usage:     "show queues, workers, hosts and counters of the whole cluster",
		UsageText: "resque-go stats [--json] [--watch [--every 2]] [--host web-1]",
		Description: "Reads stat:*, failed, retries, every queue and its queuestat:<host>:<stat>:<queue> counters,\n" +
			"every registered worker (Ruby, PHP, Node and resque-go) and the runtime records resque-go\n" +
			"processes publish (memory, CPU, load). --host keeps one host's counters, workers and\n" +
			"processes; global counters and queue lengths have no host and are always whole.\n" +
			"--watch redraws every --every seconds until interrupted (exit 0); with --json it prints\n" +
			"one JSON document per refresh instead.",
		Flags: append(redisFlags(),
			&ucli.BoolFlag{Name: "json", Usage: "print the snapshot as JSON (stable field names, see README)"},
			&ucli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "refresh every --every seconds until interrupted"},
			&ucli.StringFlag{Name: "every", Usage: "refresh interval of --watch (seconds, or a duration such as 500ms)", Value: "2"},
			&ucli.StringFlag{Name: "host", Usage: "show only this host's queue counters, workers and processes"},
		),
		Action: runStats,
	}
}

func runStats(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("stats takes no arguments (got %q)", c.Args().First())
	}
	every, err := parseSeconds("every", c.String("every"))
	if err != nil {
		return err
	}
	if c.Bool("watch") && every <= 0 {
		return usagef("--every %q: must be more than 0", c.String("every"))
	}
	log, err := newLogger(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	host, asJSON := c.String("host"), c.Bool("json")

	if !c.Bool("watch") {
		s, err := statsio.Collect(c.Context, client, host)
		if err != nil {
			return err
		}
		return writeSnapshot(c.App.Writer, s, asJSON)
	}

	// The worker commands handle signals themselves; here the first INT or
	// TERM just ends the loop (exit 0), and a second one kills as usual.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	for {
		s, err := statsio.Collect(ctx, client, host)
		if ctx.Err() != nil {
			return nil
		}
		var b bytes.Buffer
		if asJSON {
			if err != nil {
				// stdout stays a stream of JSON documents; the error goes to the log.
				log.Warn().Err(err).Dur("retry_in", every).Msg("stats not read")
			} else if err := stats.WriteJSON(&b, s); err != nil {
				return err
			}
		} else {
			if colourful(c.App.Writer) {
				b.WriteString(clearScreen) // a file or a pipe gets the snapshots one after another
			}
			if err != nil {
				fmt.Fprintf(&b, "resque-go stats: %v\n", err)
			} else if err := stats.Render(&b, s); err != nil {
				return err
			}
			fmt.Fprintf(&b, "\nrefreshing every %s; Ctrl-C stops\n", every)
		}
		if _, err := c.App.Writer.Write(b.Bytes()); err != nil {
			return err
		}
		if !service.Sleep(ctx, every) {
			return nil
		}
	}
}

func writeSnapshot(w io.Writer, s *stats.Snapshot, asJSON bool) error {
	if asJSON {
		return stats.WriteJSON(w, s)
	}
	return stats.Render(w, s)
}
