package client

import (
	"context"
	"strings"

	"github.com/resque-go/resque-go/internal/uniqueio"
	"github.com/resque-go/resque-go/unique"
)

// UniqueIDs returns every uid that has a state (queued, running, or with a
// deferred job parked), sorted by uid.
func (c *Client) UniqueIDs(ctx context.Context) ([]unique.Info, error) {
	infos, err := uniqueio.List(ctx, c.rdb)
	return infos, adminErr("unique ids", err)
}

// UniqueID returns uid's state: State "" and no Deferred when it is free.
func (c *Client) UniqueID(ctx context.Context, uid string) (unique.Info, error) {
	if strings.TrimSpace(uid) == "" {
		return unique.Info{}, invalidf("UniqueID: empty uid")
	}
	info, err := uniqueio.Get(ctx, c.rdb, uid)
	return info, adminErr("unique id "+uid, err)
}

// ClearUnique frees uid: its state is deleted and a parked deferred job is
// released (queued, or delayed by its deferrableBy) rather than dropped. A
// job of that uid still queued or running is not touched: it runs, and a
// new job with the uid can be enqueued meanwhile. by names who cleared it
// (shown in a failed entry when the deferred job cannot be released);
// empty means "client".
func (c *Client) ClearUnique(ctx context.Context, uid, by string) (unique.ClearResult, error) {
	if strings.TrimSpace(uid) == "" {
		return "", invalidf("ClearUnique: empty uid")
	}
	if by == "" {
		by = "client"
	}
	res, err := uniqueio.Clear(ctx, c.rdb, uid, by, c.now())
	return res, adminErr("clear unique "+uid, err)
}

// UniqueIDsScan is UniqueIDs a bounded part of the keyspace at a time: the
// uids whose state keys at most calls SCAN calls (COUNT count) from
// cursor on find ("": the start), sorted by uid, and the cursor of the
// next part ("" when the keyspace was walked to its end). The state keys
// have no index to page through (PHP's resque-v3 writes them with SETNX
// alone), so a uid may show on any part, and twice.
func (c *Client) UniqueIDsScan(ctx context.Context, cursor string, calls, count int) ([]unique.Info, string, error) {
	infos, next, err := uniqueio.Step(ctx, c.rdb, cursor, calls, count)
	if err != nil {
		return nil, "", adminErr("unique ids", err)
	}
	if next == "0" {
		next = ""
	}
	return infos, next, nil
}
