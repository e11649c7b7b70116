// Package massqueue holds the types and pure logic of mass queues
// (docs/massqueue.md): work routed by source (a tenant) and job name to
// named pools; static jobs served fairly between sources, and batches
// ("mass actions") worked by units, one active batch per source per pool.
// It reads and checks the mass config (LoadConfig, ParseConfig), builds
// payloads and names the results of every operation. A program routes,
// enqueues, builds batches, pauses and resumes sources and reads the
// status through package client (MassEnqueue, NewBatch, CreateMassBatch, SetMassRoute,
// PauseMassSource, MassStatus ...).
//
// Producers write the released layout of the PHP producer resqu-client, so
// queues filled by existing PHP producers are served unchanged.
package massqueue

import (
	"errors"
	"fmt"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/unique"
)

// Job is a mass-queue job.
type Job struct {
	Class string
	// Source is the payload's sourceId (the tenant), Name its job name:
	// together they choose the pool. In a batch, empty means the batch's.
	Source string
	Name   string
	// Args is JSON, an object or an array; empty, [] and {} are left out of
	// the payload (as resqu-client leaves them out).
	Args []byte
	// UniqueID, when set, adds "unique":{"uid":...} (with "deferrableBy"
	// when Deferrable), carried for the workers.
	UniqueID     string
	Deferrable   bool
	DeferrableBy int64
}

// Payload builds the payload of j in resqu-client's key order (class,
// sourceId, name, args, unique, id, queue_time), queued at now.
func Payload(j Job, now time.Time) ([]byte, error) {
	p, err := protocol.NewMassPayload(protocol.MassJob{
		Class: j.Class, SourceID: j.Source, Name: j.Name, Args: j.Args, Now: now,
		Unique: protocol.Unique{UID: j.UniqueID, Deferrable: j.Deferrable, DeferrableBy: j.DeferrableBy},
	})
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	return p, nil
}

// Enqueued is what enqueueing a static job did (client.MassEnqueueJob).
type Enqueued struct {
	ID string
	// Deferred: j is unique and deferrable and its uid's job is running:
	// j is parked and goes to unassigned when that job succeeds (after
	// DeferrableBy seconds; allocators move it when it is due).
	Deferred bool
}

// ErrDuplicate: a unique job's uid is queued or running; a static job was
// not written, a batch push stopped at that job (DuplicateError). It is
// unique.ErrDuplicate (docs/protocol.md#unique-jobs).
var ErrDuplicate = unique.ErrDuplicate

// DefaultBatchTTL is how long an uncommitted batch lives after its last
// push when no time to live is given.
const DefaultBatchTTL = time.Hour

// Errors of batches.
var (
	// ErrBatchExpired: the uncommitted batch disappeared (its time to live
	// passed since the last push) or was committed by someone else.
	ErrBatchExpired = errors.New("massqueue: batch expired (or was committed elsewhere)")
	// ErrBatchCommitted: the batch was committed already.
	ErrBatchCommitted = errors.New("massqueue: batch already committed")
	// ErrBatchEmpty: a batch with no job cannot be committed.
	ErrBatchEmpty = errors.New("massqueue: batch is empty")
)

// BatchTTL is the expiry a batch is given: ttl, or DefaultBatchTTL when
// ttl is not positive.
func BatchTTL(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return DefaultBatchTTL
	}
	return ttl
}
