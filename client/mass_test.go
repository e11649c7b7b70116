package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/resque-go/resque-go/client"
)

// A static job and a committed batch land in the released layout:
// unassigned, committed and committed:<id>.
func TestMassProducer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	ctx := context.Background()
	raw := func(_ *testing.T, cmd, key string) any { return e.do(cmd, e.key(key)) }
	id, err := c.MassEnqueue(ctx, client.MassJob{Class: "Mail", Source: "s1", Name: "mail", Args: json.RawMessage(`{"to":7}`)})
	if err != nil || id == "" {
		t.Fatalf("MassEnqueue = %q, %v", id, err)
	}
	if n := raw(t, "LLEN", "unassigned"); n != int64(1) {
		t.Errorf("unassigned holds %v", n)
	}
	b, err := c.NewBatch("s1", "import")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Push(ctx, client.MassJob{Class: "Import", Args: json.RawMessage(`[1]`)}, client.MassJob{Class: "Import", Args: json.RawMessage(`[2]`)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := raw(t, "LLEN", "committed:"+b.ID()); n != int64(2) {
		t.Errorf("committed:%s holds %v", b.ID(), n)
	}
	if n := raw(t, "LLEN", "committed"); n != int64(1) {
		t.Errorf("committed holds %v", n)
	}
	if err := b.Commit(ctx); err == nil {
		t.Error("a second Commit succeeded")
	}
}
