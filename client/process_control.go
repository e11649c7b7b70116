package client

import (
	"context"
	"errors"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Errors of QuietProcess, ResumeProcess and StopProcess.
var (
	// ErrNoProcess: no worker of that host and pid is registered; nothing
	// was written.
	ErrNoProcess = errors.New("client: no such process")
	// ErrNotControllable: the process's workers are not resque-go's (Ruby,
	// PHP or Node workers read no request: Ruby Resque's take USR2, CONT
	// and QUIT); nothing was written.
	ErrNotControllable = errors.New("client: not a resque-go process")
	// ErrPoolManager: the process is a resque-go pool manager, which runs
	// no job itself: name its children (`resque-go pool status` lists
	// them), or send the manager USR2, CONT or QUIT; nothing was written.
	ErrPoolManager = errors.New("client: a pool manager, not a worker process")
)

// QuietProcess asks a resque-go worker process to take no new job, as
// USR2 does: its running jobs finish, it stays registered and keeps
// heartbeating (Processes shows it as Paused). process is "host:pid" or
// any of its worker ids (as Workers lists them), on whatever host. The
// request is pushed to the process at once (the Pub/Sub subscription it
// reads cancel requests on) and stored for ten minutes for a process that
// is reconnecting. It returns when the request is made. It fails with
// ErrInvalid, ErrNoProcess, ErrNotControllable or ErrPoolManager.
func (c *Client) QuietProcess(ctx context.Context, process string) error {
	return c.controlProcess(ctx, "quiet process", process, protocol.ActionQuiet)
}

// ResumeProcess undoes QuietProcess (or USR2), as CONT does: the process
// takes jobs again. It fails as QuietProcess does.
func (c *Client) ResumeProcess(ctx context.Context, process string) error {
	return c.controlProcess(ctx, "resume process", process, protocol.ActionResume)
}

// StopProcess asks a resque-go worker process for a soft stop, as QUIT
// does: it takes no new job, its running jobs finish, it unregisters and
// exits 0. A pool child exits as a recycled one does, and its manager
// starts a fresh process in its place at once (not counted as a crash):
// to stop a whole pool, send its manager QUIT. It fails as QuietProcess
// does.
func (c *Client) StopProcess(ctx context.Context, process string) error {
	return c.controlProcess(ctx, "stop process", process, protocol.ActionStop)
}

func (c *Client) controlProcess(ctx context.Context, op, process, action string) error {
	host, pid, err := protocol.ParseProcessTarget(process)
	if err != nil {
		return wrap(op, invalidf("%q: want host:pid or a worker id", process))
	}
	_, err = c.rdb.ControlProcess(ctx, host, pid, action)
	switch {
	case errors.Is(err, rdb.ErrNoProcess):
		return wrap(op, ErrNoProcess)
	case errors.Is(err, rdb.ErrForeignWorker):
		return wrap(op, ErrNotControllable)
	case errors.Is(err, rdb.ErrPoolManager):
		return wrap(op, ErrPoolManager)
	}
	return wrap(op, err)
}
