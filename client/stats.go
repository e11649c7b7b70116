package client

import (
	"context"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
)

// Stats are the cluster-wide numbers resque-web shows on its overview.
type Stats struct {
	// Processed counts every finished job, successes and failures
	// (stat:processed, Ruby semantics); Failed the jobs recorded as failed
	// (stat:failed); Retries the retries resque-go made (stat:retries).
	// These counters only grow.
	Processed int64
	Failed    int64
	Retries   int64
	// FailedEntries is the length of the failed list now (entries can be
	// retried away or removed, so it may be less than Failed).
	FailedEntries int64
	// Pending is the number of jobs waiting, over every queue in Queues.
	Pending int64
	Queues  int
	// Workers is the number of registered workers, Working those running
	// a job.
	Workers int
	Working int
	// Time is the Redis server's clock at the reading.
	Time time.Time
	// Problems names the keys the reading could not use (a queue or
	// counter key of another type, a counter that is not a number): each
	// read as empty, and the other numbers are still there.
	Problems []KeyProblem
	// SetAside are the keys written by hand (of another type, or holding
	// a value no resque-go process writes) that workers set aside in the
	// last day, by key: each names what was not done because of it (a tag
	// index not updated, events not written, a cap's lease not taken).
	// Fix or delete each key; it stops showing a day after it was last met.
	SetAside []SetAsideKey
}

// SetAsideKey is a key a worker's step set aside, what the step did not do
// because of it, and when it last met the key.
type SetAsideKey struct {
	Key, What string
	At        time.Time
}

// setAside is the client's form of rdb's set-aside keys.
func setAside(in []rdb.SetAsideKey) []SetAsideKey {
	if len(in) == 0 {
		return nil
	}
	out := make([]SetAsideKey, len(in))
	for i, k := range in {
		out[i] = SetAsideKey{Key: k.Key, What: k.What, At: k.At}
	}
	return out
}

// KeyProblem is a key a read could not use and why ("holds a string, not
// a list").
type KeyProblem struct {
	Key     string
	Problem string
}

// keyProblems splits a read's error into the keys it could not use, which
// leave the rest of the reading valid, and any other error.
func keyProblems(err error) ([]KeyProblem, error) {
	bad, ok := rdb.BadKeys(err)
	if !ok {
		return nil, err
	}
	out := make([]KeyProblem, len(bad))
	for i, b := range bad {
		out[i] = KeyProblem{Key: b.Key, Problem: b.Problem}
	}
	return out, nil
}

// Stats reads the counters, list lengths and worker states in two round
// trips. It is not one atomic view: a job moving meanwhile may be counted
// in two places or none, as in any Resque dashboard. A key it cannot use
// is named in Problems and counted as empty; the rest is read.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	ov, err := c.rdb.StatsOverview(ctx)
	problems, err := keyProblems(err)
	if err != nil {
		return Stats{}, wrap("stats", err)
	}
	k := c.rdb.Keys()
	queueKeys := make([]string, len(ov.Queues))
	for i, q := range ov.Queues {
		queueKeys[i] = k.Queue(q)
	}
	workerKeys := make([]string, len(ov.Workers))
	for i, id := range ov.Workers {
		workerKeys[i] = k.Worker(id)
	}
	lens, recs, err := c.rdb.BatchRead(ctx, queueKeys, workerKeys)
	more, err := keyProblems(err)
	if err != nil {
		return Stats{}, wrap("stats", err)
	}
	s := Stats{Processed: ov.Processed, Failed: ov.Failed, Retries: ov.Retries, FailedEntries: ov.FailedLen,
		Queues: len(ov.Queues), Workers: len(ov.Workers), Time: ov.Now, Problems: append(problems, more...),
		SetAside: setAside(ov.SetAside)}
	for _, n := range lens {
		s.Pending += n
	}
	for _, r := range recs {
		if r != nil {
			s.Working++
		}
	}
	return s, nil
}
