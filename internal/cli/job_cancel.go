package cli

import (
	"errors"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/rdb"
)

func jobCancelCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "cancel",
		Usage:     "cancel the job a resque-go worker is running (it ends in failed as ResqueGo::Cancelled)",
		ArgsUsage: "WORKER_ID | --job-id ID",
		Description: "WORKER_ID is the worker id as the dashboard's Workers page and the client's Workers list\n" +
			"show it (host:pid:queues, host:pid-slot:queues for a slot). The request names that job's\n" +
			"claim, so it never reaches the worker's next job; every resque-go process gets it at once\n" +
			"(Pub/Sub), and one that is reconnecting reads it within ten minutes. A Go handler's context\n" +
			"is cancelled; an exec or fork job gets SIGTERM, then SIGKILL after its grace period. The\n" +
			"job is not retried unless --retry is given. It exits 1, saying so, when no job is running.",
		Flags: append(redisFlags(),
			&ucli.StringFlag{Name: "job-id", Usage: "cancel the running job whose payload has this \"id\" instead of naming its worker"},
			&ucli.BoolFlag{Name: "retry", Usage: "let the job's retry policy apply to the cancelled attempt"},
			&ucli.BoolFlag{Name: "json", Usage: "print JSON"},
		),
		Action: jobCancel,
	}
}

func jobCancel(c *ucli.Context) error {
	id := c.String("job-id")
	switch {
	case c.IsSet("job-id") && id == "":
		return usagef("job cancel: --job-id is empty")
	case id != "" && c.NArg() > 0:
		return usagef("job cancel takes WORKER_ID or --job-id, not both")
	case id == "" && c.NArg() == 0:
		return usagef("job cancel needs a WORKER_ID or --job-id ID")
	case c.NArg() > 1:
		return usagef("job cancel takes one WORKER_ID, got %d arguments", c.NArg())
	case id == "" && c.Args().First() == "":
		return usagef("job cancel: the worker id is empty")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	wid := c.Args().First()
	if id != "" {
		wid, err = client.CancelJobByID(c.Context, id, c.Bool("retry"))
	} else {
		_, err = client.CancelJob(c.Context, wid, nil, c.Bool("retry"))
	}
	switch {
	case errors.Is(err, rdb.ErrNoJob) && id != "":
		return fmt.Errorf("no running job has id %s", id)
	case errors.Is(err, rdb.ErrNoJob):
		return fmt.Errorf("no job running on %s", wid)
	case errors.Is(err, rdb.ErrForeignWorker):
		return fmt.Errorf("%s is not a resque-go worker (Ruby Resque's workers cancel their job on USR1)", wid)
	case err != nil:
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"worker_id": wid, "job_id": id, "retry": c.Bool("retry"), "requested": true})
	}
	fmt.Fprintf(c.App.Writer, "cancel requested for the job on %s\n", wid)
	return nil
}
