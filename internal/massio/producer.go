package massio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// EnqueueStatic routes j on its own (the static path): its payload is
// pushed to unassigned, from where an allocator moves it to its pool. It
// returns the job's id (EnqueueStaticJob also says whether it was
// deferred).
func EnqueueStatic(ctx context.Context, c *rdb.Client, j massqueue.Job) (string, error) {
	e, err := EnqueueStaticJob(ctx, c, j)
	return e.ID, err
}

// EnqueueStaticJob is EnqueueStatic, reporting a deferral. A unique job
// (docs/protocol.md#unique-jobs) is refused with ErrDuplicate while its uid is queued, or
// running unless it is deferrable (then parked, the first one only).
func EnqueueStaticJob(ctx context.Context, c *rdb.Client, j massqueue.Job) (massqueue.Enqueued, error) {
	p, err := massqueue.Payload(j, time.Now())
	if err != nil {
		return massqueue.Enqueued{}, err
	}
	deferred := false
	if j.UniqueID != "" {
		u := rdb.UniqueJob{UID: j.UniqueID, Push: p, Unassigned: true}
		if j.Deferrable {
			u.Deferred = p // released through unassigned (unique_release.lua)
		}
		res, err := c.EnqueueUnique(ctx, u)
		if err != nil {
			return massqueue.Enqueued{}, fmt.Errorf("massqueue: %w", err)
		}
		switch res {
		case rdb.UniqueQueued:
		case rdb.UniqueDeferred:
			deferred = true
		default:
			return massqueue.Enqueued{}, fmt.Errorf("%w (uid %q)", massqueue.ErrDuplicate, j.UniqueID)
		}
	} else if _, err := c.EnqueueStatic(ctx, p); err != nil {
		return massqueue.Enqueued{}, fmt.Errorf("massqueue: %w", err)
	}
	v, err := protocol.DecodePayload(p)
	if err != nil {
		return massqueue.Enqueued{}, fmt.Errorf("massqueue: %w", err)
	}
	return massqueue.Enqueued{ID: v.ID, Deferred: deferred}, nil
}

type batchState int

const (
	batchNew       batchState = iota // nothing pushed yet: the first push creates the list
	batchOpen                        // the list exists: LPUSHX
	batchUnknown                     // opened by id: the list may or may not exist yet
	batchCommitted                   // committed
)

// Batch is a mass action being built: jobs pushed to it run only after
// Commit, worked by a unit of the batch's pool. A Batch is not safe for
// concurrent use.
type Batch struct {
	c      *rdb.Client
	id     string
	source string
	name   string
	ttl    time.Duration
	state  batchState
	now    func() time.Time
	// uniq: the batch holds unique jobs, so every push goes through the
	// checked push, which keeps their queued states alive.
	uniq bool
}

// NewBatch starts a batch of source's job name. Nothing is written until
// the first Push; the list then lives ttl (DefaultBatchTTL when <= 0) after
// each push until Commit.
func NewBatch(c *rdb.Client, source, name string, ttl time.Duration) (*Batch, error) {
	if err := protocol.CheckSourceID(source); err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	if err := protocol.CheckBatchName(name); err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	return &Batch{c: c, id: protocol.NewBatchID(source, name), source: source, name: name, ttl: massqueue.BatchTTL(ttl), now: time.Now}, nil
}

// OpenBatch continues a batch by its id: one CreateBatch reserved (`mass
// batch create` printed its id) or one whose list exists. Its first push
// fails with ErrBatchExpired when neither is there any more (the
// reservation or the list expired, or the batch was committed): the batch
// is not started again without the jobs pushed to it before.
func OpenBatch(c *rdb.Client, id string, ttl time.Duration) (*Batch, error) {
	source, name, _, err := protocol.ParseBatchID(id)
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	if err := protocol.CheckSourceID(source); err != nil {
		return nil, fmt.Errorf("massqueue: batch %q: %w", id, err)
	}
	return &Batch{c: c, id: id, source: source, name: name, ttl: massqueue.BatchTTL(ttl), state: batchUnknown, now: time.Now}, nil
}

// CreateBatch reserves a batch id of source's job name for pushes that come
// later by id (OpenBatch), as `mass batch create` does; the reservation
// lives ttl (DefaultBatchTTL when <= 0) until the first push.
func CreateBatch(ctx context.Context, c *rdb.Client, source, name string, ttl time.Duration) (string, error) {
	b, err := NewBatch(c, source, name, ttl)
	if err != nil {
		return "", err
	}
	for range 10 {
		err = c.BatchCreate(ctx, b.id, b.ttl)
		if !errors.Is(err, rdb.ErrBatchExists) {
			break
		}
		b.id = protocol.NewBatchID(source, name) // taken: draw again
	}
	if err != nil {
		return "", fmt.Errorf("massqueue: %w", err)
	}
	return b.id, nil
}

// ID is the batch id, <source>:<name>:<8 hex>. A NewBatch whose first push
// found its id taken draws another one, so the id is final after the first
// Push.
func (b *Batch) ID() string { return b.id }

// Push adds jobs to the batch, in order (workers take them in this order).
// A unique job (UniqueID) is pushed only while no job with its uid is
// queued or running, a job of this push included; its uid is then queued
// until the job ends, as for a queue job (and freed with an abandoned
// batch, see BatchUniqueStateTTL). The push stops at a refused job: a
// *DuplicateError (errors.Is ErrDuplicate) says which; the jobs before it
// are in the batch, it and those after it are not. A deferrable unique job
// is refused before anything is pushed (a released job would run outside its batch).
func (b *Batch) Push(ctx context.Context, jobs ...massqueue.Job) error {
	now := b.now()
	bj := make([]rdb.BatchJob, 0, len(jobs))
	for i, j := range jobs {
		if j.Source == "" {
			j.Source = b.source
		}
		if j.Name == "" {
			j.Name = b.name
		}
		if j.UniqueID != "" && j.Deferrable {
			return fmt.Errorf("%w (job %d, uid %q)", massqueue.ErrDeferrableInBatch, i+1, j.UniqueID)
		}
		p, err := massqueue.Payload(j, now)
		if err != nil {
			return err
		}
		bj = append(bj, rdb.BatchJob{UID: j.UniqueID, Payload: p})
	}
	return b.push(ctx, bj)
}

// PushPayloads adds payloads as they are (already in the mass layout),
// checking their unique field as Push does.
func (b *Batch) PushPayloads(ctx context.Context, payloads [][]byte) error {
	bj := make([]rdb.BatchJob, 0, len(payloads))
	for i, p := range payloads {
		u, ok, err := protocol.ParseUnique(p)
		if err != nil {
			return fmt.Errorf("massqueue: payload %d: %w", i+1, err)
		}
		if ok && u.Deferrable {
			return fmt.Errorf("%w (payload %d, uid %q)", massqueue.ErrDeferrableInBatch, i+1, u.UID)
		}
		bj = append(bj, rdb.BatchJob{UID: u.UID, Payload: p})
	}
	return b.push(ctx, bj)
}

func (b *Batch) push(ctx context.Context, jobs []rdb.BatchJob) error {
	if b.state == batchCommitted {
		return massqueue.ErrBatchCommitted
	}
	done := 0
	for done < len(jobs) {
		chunk := jobs[done:min(len(jobs), done+pushChunk)]
		if b.uniq || b.state == batchUnknown || hasUID(chunk) {
			n, err := b.pushChecked(ctx, chunk)
			done += n
			if err != nil {
				var de *massqueue.DuplicateError
				if errors.As(err, &de) {
					de.Index = done
				}
				return err
			}
			continue
		}
		switch b.state {
		case batchNew:
			err := b.c.BatchInit(ctx, b.id, chunk[0].Payload, b.ttl)
			if errors.Is(err, rdb.ErrBatchExists) {
				b.id = protocol.NewBatchID(b.source, b.name) // as resqu-client: draw again
				continue
			}
			if err != nil {
				return fmt.Errorf("massqueue: %w", err)
			}
			b.state = batchOpen
			done++
		default:
			ps := make([][]byte, len(chunk))
			for i, j := range chunk {
				ps[i] = j.Payload
			}
			if _, err := b.c.BatchPush(ctx, b.id, ps, b.ttl); err != nil {
				if errors.Is(err, rdb.ErrBatchMissing) {
					return fmt.Errorf("%w: %s", massqueue.ErrBatchExpired, b.id)
				}
				return fmt.Errorf("massqueue: %w", err)
			}
			done += len(chunk)
		}
	}
	return nil
}

// pushChunk bounds the payloads one LPUSHX carries.
const pushChunk = 500

// Commit hands the batch to the allocators. Errors: ErrBatchEmpty (nothing
// pushed), ErrBatchExpired, ErrBatchCommitted.
func (b *Batch) Commit(ctx context.Context) error {
	switch b.state {
	case batchNew:
		return massqueue.ErrBatchEmpty
	case batchCommitted:
		return massqueue.ErrBatchCommitted
	}
	if err := CommitBatch(ctx, b.c, b.id); err != nil {
		return err
	}
	b.state = batchCommitted
	return nil
}

// CommitBatch commits the batch id (`mass batch commit`).
func CommitBatch(ctx context.Context, c *rdb.Client, id string) error {
	err := c.BatchCommit(ctx, id)
	switch {
	case errors.Is(err, rdb.ErrBatchMissing):
		return fmt.Errorf("%w: %s", massqueue.ErrBatchExpired, id)
	case errors.Is(err, rdb.ErrBatchCommitted):
		return fmt.Errorf("%w: %s", massqueue.ErrBatchCommitted, id)
	case err != nil:
		return fmt.Errorf("massqueue: %w", err)
	}
	return nil
}
