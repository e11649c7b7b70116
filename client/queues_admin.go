package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/resque-go/resque-go/internal/rdb"
)

// JobFilter selects the jobs of a queue that RemoveJobs deletes.
type JobFilter struct {
	// Class is the payload's "class", compared exactly; required.
	Class string
	// ID, when not empty, is the payload's "id", compared exactly.
	ID string
	// Args, when not nil, is a JSON array or object. An array matches jobs
	// whose args array is equal to it. An object matches jobs whose args
	// object holds each of its keys with an equal value (resque-v3 writes
	// args as an object), or whose args array is one such object
	// (php-resque wraps its assoc array: "args":[{...}]). Values compare
	// as JSON values: 1 equals 1.0, integers beyond 2^53 are compared as
	// doubles, and an empty array equals an empty object. Give ID or Args,
	// not both.
	Args json.RawMessage
}

// RemoveProgress is what RemoveJobs reports after each step.
type RemoveProgress struct {
	// Total is the queue's length when the removal began.
	Total int64
	// Examined counts the jobs looked at so far (workers may take the
	// rest before they are reached).
	Examined int64
	// Removed counts the jobs deleted so far.
	Removed int64
}

// RemoveJobs deletes the jobs of queue that f selects and returns how many
// it deleted. Workers and producers can go on meanwhile: it works in small
// atomic steps (a few milliseconds each), deletes only matching jobs that
// were in the queue when it began and that no worker took meanwhile, and
// never moves or deletes any other job. progress, when not nil, is called
// after each step. On an error the jobs deleted so far stay deleted; their
// number is returned with it.
func (c *Client) RemoveJobs(ctx context.Context, queue string, f JobFilter, progress func(RemoveProgress)) (int64, error) {
	if queue == "" {
		return 0, invalidf("RemoveJobs: empty queue name")
	}
	if strings.TrimSpace(f.Class) == "" {
		return 0, invalidf("RemoveJobs needs a class")
	}
	if f.ID != "" && f.Args != nil {
		return 0, invalidf("RemoveJobs takes ID or Args, not both")
	}
	opt := rdb.RemoveOptions{}
	if progress != nil {
		opt.Progress = func(p rdb.RemoveProgress) {
			progress(RemoveProgress{Total: p.Total, Examined: p.Examined, Removed: p.Removed})
		}
	}
	n, err := c.rdb.RemoveJobs(ctx, queue, rdb.JobMatch{Class: f.Class, ID: f.ID, Args: f.Args}, opt)
	if errors.Is(err, rdb.ErrBadMatch) {
		return 0, invalidf("RemoveJobs: Args %s: want a JSON array or object", clip(f.Args))
	}
	return n, wrap("remove jobs", err)
}

// ClearQueue deletes every job of queue and returns how many there were,
// counted and deleted in one step. The queue stays in the queues set.
func (c *Client) ClearQueue(ctx context.Context, queue string) (int64, error) {
	if queue == "" {
		return 0, invalidf("ClearQueue: empty queue name")
	}
	n, err := c.rdb.ClearQueue(ctx, queue)
	return n, wrap("clear queue", err)
}
