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

var cancelJobScript = loadScript("cancel_job.lua", 3)

// Cancel request errors.
var (
	// ErrNoJob: the worker slot runs no job (or no longer the one named).
	ErrNoJob = errors.New("rdb: no job running")
	// ErrForeignWorker: the slot's job was not claimed by resque-go (a Ruby
	// or PHP worker), which reads no cancel request.
	ErrForeignWorker = errors.New("rdb: not a resque-go worker")
)

// CancelJob stores and publishes a cancel request for the claim the slot
// workerID holds now (cancel_job.lua). With record non-nil the request is
// made only while the slot's record is still exactly record (a cancel by
// job id: the job seen is the job cancelled). It returns the claim's
// sequence, ErrNoJob or ErrForeignWorker.
func (c *Client) CancelJob(ctx context.Context, workerID string, record []byte, retry bool) (string, error) {
	k := c.keys
	if record == nil {
		record = []byte{}
	}
	v, err := redis.Strings(c.eval(ctx, cancelJobScript, k.Worker(workerID), k.ClaimSeqs(), k.CancelKey(workerID),
		workerID, protocol.CancelFlag(retry), int64(protocol.CancelTTL/time.Second), k.CancelChannel(), record))
	if err != nil {
		return "", fmt.Errorf("rdb: cancel job of %q: %w", workerID, err)
	}
	switch {
	case len(v) == 2 && v[0] == "ok":
		return v[1], nil
	case len(v) == 1 && v[0] == "idle":
		return "", ErrNoJob
	case len(v) == 1 && v[0] == "foreign":
		return "", ErrForeignWorker
	}
	return "", fmt.Errorf("rdb: cancel job of %q: unexpected reply %q", workerID, v)
}

// CancelJobByID makes CancelJob's request for the running job whose
// payload's "id" is id, found among the records of the registered worker
// slots (one SMEMBERS, one MGET): only while that slot still runs that
// job. It returns the slot's worker id, or ErrNoJob.
func (c *Client) CancelJobByID(ctx context.Context, id string, retry bool) (string, error) {
	ids, err := redis.Strings(c.do(ctx, "SMEMBERS", c.keys.Workers()))
	if err != nil || len(ids) == 0 {
		if err != nil {
			err = fmt.Errorf("rdb: cancel job %q: %w", id, err)
		} else {
			err = ErrNoJob
		}
		return "", err
	}
	slices.Sort(ids)
	keys := make([]any, len(ids))
	for i, wid := range ids {
		keys[i] = c.keys.Worker(wid)
	}
	recs, err := redis.ByteSlices(c.do(ctx, "MGET", keys...))
	if err != nil {
		return "", fmt.Errorf("rdb: cancel job %q: %w", id, err)
	}
	for i, raw := range recs {
		if raw == nil {
			continue
		}
		rec, err := protocol.ParseWorkerRecord(raw)
		if err != nil {
			continue
		}
		if p, err := protocol.DecodePayload(rec.Payload); err == nil && p.ID == id {
			_, err := c.CancelJob(ctx, ids[i], raw, retry)
			return ids[i], err
		}
	}
	return "", ErrNoJob
}

// StoredCancels reads the stored cancel requests of workerIDs (MGET): the
// ones a worker missed while its subscription was down. Unreadable values
// are skipped.
func (c *Client) StoredCancels(ctx context.Context, workerIDs []string) ([]protocol.Cancel, error) {
	if len(workerIDs) == 0 {
		return nil, nil
	}
	keys := make([]any, len(workerIDs))
	for i, id := range workerIDs {
		keys[i] = c.keys.CancelKey(id)
	}
	vals, err := redis.ByteSlices(c.do(ctx, "MGET", keys...))
	if err != nil {
		return nil, fmt.Errorf("rdb: stored cancels: %w", err)
	}
	var out []protocol.Cancel
	for i, v := range vals {
		if v == nil {
			continue
		}
		if req, err := protocol.DecodeStoredCancel(workerIDs[i], v); err == nil {
			out = append(out, req)
		}
	}
	return out, nil
}

// cancelPing is how often a cancel subscription pings: a broken
// connection is noticed within about twice this.
const cancelPing = 10 * time.Second

// SubscribeRequests subscribes to the cancel channel and the process
// request channel on one connection of its own (not the pool's) and calls
// onCancel for each cancel request and onControl for each process request,
// from this goroutine, until ctx is done (nil) or the connection fails (the
// error). ready is called once both subscriptions are in place: a caller
// reads the stored requests then, so that none made while it was not
// subscribed is missed.
func (c *Client) SubscribeRequests(ctx context.Context, ready func(), onCancel func(protocol.Cancel), onControl func(protocol.ProcessControl)) error {
	conn, err := c.pool.DialContext(ctx)
	if err != nil {
		return fmt.Errorf("rdb: subscribe requests: %w", err)
	}
	psc := redis.PubSubConn{Conn: conn}
	defer psc.Close()
	cancels, controls := c.keys.CancelChannel(), c.keys.ProcessControlChannel()
	if err := psc.Subscribe(cancels, controls); err != nil {
		return fmt.Errorf("rdb: subscribe requests: %w", err)
	}
	// a ping every cancelPing proves the connection (a read waits for at
	// most two); a done ctx ends the blocked read by closing it
	pingCtx, stopPing := context.WithCancel(ctx)
	defer stopPing()
	go func() {
		t := time.NewTicker(cancelPing)
		defer t.Stop()
		for {
			select {
			case <-pingCtx.Done():
				_ = conn.Close()
				return
			case <-t.C:
				if psc.Ping("") != nil {
					return
				}
			}
		}
	}()
	for {
		switch m := psc.ReceiveWithTimeout(2*cancelPing + time.Second).(type) {
		case redis.Message:
			switch m.Channel {
			case cancels:
				if req, err := protocol.DecodeCancelMessage(m.Data); err == nil {
					onCancel(req)
				}
			case controls:
				if req, err := protocol.DecodeProcessControl(m.Data); err == nil {
					onControl(req)
				}
			}
		case redis.Subscription:
			if m.Kind == "subscribe" && m.Count == 2 {
				ready()
			}
		case error:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("rdb: request subscription: %w", m)
		}
	}
}
