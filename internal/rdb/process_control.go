package rdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

var processControlScript = loadScript("process_control.lua", 2)

// Process request errors (ControlProcess).
var (
	// ErrNoProcess: no worker of that host and pid is registered.
	ErrNoProcess = errors.New("rdb: no such process")
	// ErrPoolManager: the process is a resque-go pool manager, which runs
	// no job itself; its children are the processes to name.
	ErrPoolManager = errors.New("rdb: a pool manager")
)

// ControlProcess stores and publishes a request (protocol.ActionQuiet,
// ActionResume, ActionStop) for the resque-go process host:pid
// (process_control.lua). The process is found by its registered worker
// ids (one SMEMBERS of the workers set, as CancelJobByID reads it). It
// returns the request's id, ErrNoProcess, ErrPoolManager, or
// ErrForeignWorker when the workers of that process are not resque-go's
// (Ruby, PHP, Node), which read no request.
func (c *Client) ControlProcess(ctx context.Context, host string, pid int, action string) (string, error) {
	if !protocol.ValidAction(action) {
		return "", fmt.Errorf("rdb: control process: unknown action %q", action)
	}
	target := protocol.ProcessTarget(host, pid)
	ids, err := redis.Strings(c.do(ctx, "SMEMBERS", c.keys.Workers()))
	if err != nil {
		return "", fmt.Errorf("rdb: control process %s: %w", target, err)
	}
	var mine []string
	for _, s := range ids {
		if id, err := protocol.ParseWorkerID(s); err == nil && id.Host == host && id.PID == pid {
			mine = append(mine, s)
		}
	}
	if len(mine) == 0 {
		n, err := redis.Int(c.do(ctx, "EXISTS", c.keys.PoolManager(host, pid)))
		if err != nil {
			return "", fmt.Errorf("rdb: control process %s: %w", target, err)
		}
		if n > 0 {
			return "", ErrPoolManager
		}
		return "", ErrNoProcess
	}
	slices.Sort(mine)
	reqID := protocol.NewJobID()
	args := []any{c.keys.WorkerIntervals(), c.keys.ProcessControlKey(host, pid),
		action + " " + reqID, int64(protocol.ProcessControlTTL / time.Second), c.keys.ProcessControlChannel(), target}
	for _, id := range mine {
		args = append(args, id)
	}
	v, err := redis.String(c.eval(ctx, processControlScript, args...))
	if err != nil {
		return "", fmt.Errorf("rdb: control process %s: %w", target, err)
	}
	switch v {
	case "ok":
		return reqID, nil
	case "foreign":
		return "", ErrForeignWorker
	}
	return "", fmt.Errorf("rdb: control process %s: unexpected reply %q", target, v)
}

// StoredProcessControl reads the stored request for host:pid: the one a
// process missed while its subscription was down. ok is false when there
// is none (or it cannot be read).
func (c *Client) StoredProcessControl(ctx context.Context, host string, pid int) (req protocol.ProcessControl, ok bool, err error) {
	v, err := redis.Bytes(c.do(ctx, "GET", c.keys.ProcessControlKey(host, pid)))
	if errors.Is(err, redis.ErrNil) {
		return protocol.ProcessControl{}, false, nil
	}
	if err != nil {
		return protocol.ProcessControl{}, false, fmt.Errorf("rdb: stored process request: %w", err)
	}
	req, err = protocol.DecodeStoredProcessControl(host, pid, v)
	return req, err == nil, nil
}
