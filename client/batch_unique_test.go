package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/massqueue"
)

// Batch.Push checks unique jobs: a uid queued by Enqueue refuses it, one
// pushed to a batch refuses Enqueue and another batch; the push stops at
// the refused job.
func TestBatchPushUnique(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	ctx := context.Background()
	if _, err := c.EnqueueRaw(ctx, "mail", "Mail", []byte(`[]`), client.Unique("q1")); err != nil {
		t.Fatal(err)
	}
	b, err := c.NewBatch("s1", "import")
	if err != nil {
		t.Fatal(err)
	}
	job := func(uid string) client.MassJob {
		return client.MassJob{Class: "Import", Args: json.RawMessage(`[1]`), UniqueID: uid}
	}
	err = b.Push(ctx, job("b1"), job(""), job("q1"), job("b3"))
	var de *massqueue.DuplicateError
	if !errors.Is(err, client.ErrDuplicate) || !errors.As(err, &de) || de.UID != "q1" || de.Index != 2 {
		t.Fatalf("Push = %v", err)
	}
	if n := e.do("LLEN", e.key("uncommitted:"+b.ID())); n != int64(2) {
		t.Errorf("batch holds %v jobs, want 2", n)
	}
	if _, err := c.EnqueueRaw(ctx, "mail", "Mail", []byte(`[]`), client.Unique("b1")); !errors.Is(err, client.ErrDuplicate) {
		t.Errorf("Enqueue of a uid in a batch = %v", err)
	}
	b2, err := c.NewBatch("s2", "import")
	if err != nil {
		t.Fatal(err)
	}
	if err := b2.Push(ctx, job("b1")); !errors.Is(err, client.ErrDuplicate) {
		t.Errorf("Push of a uid in another batch = %v", err)
	}
	if err := b2.Push(ctx, job("b3")); err != nil {
		t.Errorf("Push of the uid after the refused one = %v", err)
	}
}
