package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/stats"
)

// processCommand groups the commands about resque-go worker processes:
// list them, and quiet, resume or stop one on whatever host.
func processCommand() *ucli.Command {
	return &ucli.Command{Name: "process", Usage: "list resque-go worker processes; quiet, resume or stop one on any host", Subcommands: []*ucli.Command{
		processListCommand(),
		processActionCommand(protocol.ActionQuiet, "take no new job (as USR2); running jobs finish, the process stays registered",
			(*client.Client).QuietProcess, "quiet requested"),
		processActionCommand(protocol.ActionResume, "take jobs again after quiet (as CONT)",
			(*client.Client).ResumeProcess, "resume requested"),
		processActionCommand(protocol.ActionStop, "soft stop (as QUIT): running jobs finish, then the process exits 0 (a pool child is replaced)",
			(*client.Client).StopProcess, "stop requested"),
	}}
}

const processDescription = "PROCESS is host:pid, or any worker id of the process as the dashboard's Workers page and\n" +
	"`resque-go stats` show it (host:pid-slot:queues). The request is pushed to the process at\n" +
	"once (Pub/Sub) and stored for ten minutes for one that is reconnecting. Only resque-go\n" +
	"processes read it: one whose workers are Ruby's, PHP's or Node's is refused (exit 1; send\n" +
	"those their signals), as is a pool manager (name its children, or signal the manager)."

func processActionCommand(action, usage string, call func(*client.Client, context.Context, string) error, done string) *ucli.Command {
	return &ucli.Command{
		Name:        action,
		Usage:       usage,
		ArgsUsage:   "PROCESS",
		Description: processDescription,
		Flags:       append(redisFlags(), &ucli.BoolFlag{Name: "json", Usage: "print JSON"}),
		Action: func(c *ucli.Context) error {
			switch {
			case c.NArg() == 0:
				return usagef("process %s needs a PROCESS (host:pid or a worker id)", action)
			case c.NArg() > 1:
				return usagef("process %s takes one PROCESS, got %d arguments", action, c.NArg())
			}
			host, pid, err := protocol.ParseProcessTarget(c.Args().First())
			if err != nil {
				return usagef("process %s: %q: want host:pid or a worker id (host:pid-slot:queues)", action, c.Args().First())
			}
			target := protocol.ProcessTarget(host, pid)
			cl, err := publicClient(c)
			if err != nil {
				return err
			}
			defer cl.Close()
			err = call(cl, c.Context, target)
			switch {
			case errors.Is(err, client.ErrNoProcess):
				return fmt.Errorf("no worker of process %s is registered", target)
			case errors.Is(err, client.ErrNotControllable):
				return fmt.Errorf("%s is not a resque-go process (Ruby, PHP and Node workers take signals: USR2 to quiet, CONT to resume, QUIT to stop)", target)
			case errors.Is(err, client.ErrPoolManager):
				return fmt.Errorf("%s is a resque-go pool manager: name one of its children (resque-go pool status), or send the manager USR2, CONT or QUIT", target)
			case err != nil:
				return err
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, map[string]any{"process": target, "action": action, "requested": true})
			}
			fmt.Fprintf(c.App.Writer, "%s for %s\n", done, target)
			return nil
		},
	}
}

func processListCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "list",
		Usage: "list the resque-go worker processes (from their runtime records): slots, state, RSS, CPU",
		Description: "Each process is found by its registered workers and read from its runtime record\n" +
			"(docs/operations.md#runtime-records); Ruby, PHP and Node workers write none and are not\n" +
			"listed (`resque-go stats` shows every worker).",
		Flags:  append(redisFlags(), &ucli.BoolFlag{Name: "json", Usage: "print JSON"}),
		Action: processList,
	}
}

func processList(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("process list takes no argument")
	}
	cl, err := publicClient(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	recs, err := cl.Processes(c.Context, nil)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		type item struct {
			Process string `json:"process"`
			State   string `json:"state"`
			stats.Record
		}
		items := make([]item, len(recs))
		for i, r := range recs {
			items[i] = item{Process: protocol.ProcessTarget(r.Host, r.PID), State: processState(r), Record: r}
		}
		return writeJSON(c.App.Writer, map[string]any{"items": items, "total": len(items)})
	}
	if len(recs) == 0 {
		fmt.Fprintln(c.App.Writer, "no resque-go worker process is registered")
		return nil
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROCESS\tSTATE\tBUSY\tRSS\tCPU\tUPDATED")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%.1f MiB\t%.1f%%\t%s\n", protocol.ProcessTarget(r.Host, r.PID), processState(r),
			r.SlotsBusy, r.SlotsTotal, float64(r.RSSBytes)/(1<<20), r.CPUPercent, r.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return tw.Flush()
}

// processState is "quiet" for a process that takes no new job (a quiet
// request or USR2), else "running".
func processState(r stats.Record) string {
	if r.Paused {
		return "quiet"
	}
	return "running"
}
