package poolrun

import (
	"context"
	"fmt"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/pool"
)

// ReadStatus returns the status records of every running pool manager (of
// one host when host is not empty), by host and pid. A record that is not
// valid JSON is skipped, not fatal: it says so in the returned warnings.
func ReadStatus(ctx context.Context, client *rdb.Client, host string) (recs []pool.Record, warnings []string, err error) {
	keys, vals, err := client.PoolRecords(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("pool: status: %w", err)
	}
	k := client.Keys()
	for i, key := range keys {
		h, _, ok := k.ParsePoolManager(key)
		if !ok || host != "" && h != host {
			continue
		}
		r, err := protocol.ParsePoolRecord(vals[i])
		if err != nil {
			warnings = append(warnings, key+": "+err.Error())
			continue
		}
		recs = append(recs, fromProtocol(r))
	}
	return recs, warnings, nil
}

// fromProtocol and toProtocol convert between the record as package pool
// shows it and as internal/protocol encodes it (the same fields).
func fromProtocol(r protocol.PoolRecord) pool.Record {
	children := make([]pool.Child, len(r.Children))
	for i, c := range r.Children {
		children[i] = pool.Child(c)
	}
	return pool.Record{PID: r.PID, Host: r.Host, Config: r.Config, Format: r.Format, StartedAt: r.StartedAt,
		UpdatedAt: r.UpdatedAt, RefreshIntervalS: r.RefreshIntervalS, State: r.State, RSSBytes: r.RSSBytes,
		CPUPercent: r.CPUPercent, Children: children}
}

func toProtocol(r pool.Record) protocol.PoolRecord {
	children := make([]protocol.PoolChild, len(r.Children))
	for i, c := range r.Children {
		children[i] = protocol.PoolChild(c)
	}
	return protocol.PoolRecord{PID: r.PID, Host: r.Host, Config: r.Config, Format: r.Format, StartedAt: r.StartedAt,
		UpdatedAt: r.UpdatedAt, RefreshIntervalS: r.RefreshIntervalS, State: r.State, RSSBytes: r.RSSBytes,
		CPUPercent: r.CPUPercent, Children: children}
}
