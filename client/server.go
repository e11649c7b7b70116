package client

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"time"
)

// ServerInfo is a summary of the Redis server's INFO: what a dashboard
// shows about the server, nothing that names files or credentials.
type ServerInfo struct {
	Version string // redis_version
	Mode    string // redis_mode: standalone, sentinel or cluster
	Role    string // master or replica
	Uptime  time.Duration
	// ConnectedClients counts the client connections, this one included.
	ConnectedClients int64
	// UsedMemory and MaxMemory are bytes (MaxMemory 0: no limit);
	// MaxMemoryPolicy is what Redis evicts at the limit ("noeviction" is
	// the one a job queue wants).
	UsedMemory      int64
	PeakMemory      int64
	MaxMemory       int64
	MaxMemoryPolicy string
	// OpsPerSec is instantaneous_ops_per_sec.
	OpsPerSec int64
}

// ServerInfo reads the Redis server's INFO (one round trip).
func (c *Client) ServerInfo(ctx context.Context) (ServerInfo, error) {
	text, err := c.rdb.Info(ctx)
	if err != nil {
		return ServerInfo{}, wrap("server info", err)
	}
	return parseInfo(text), nil
}

// parseInfo reads the fields of ServerInfo from INFO's text; fields it
// lacks (an older server, a proxy) stay zero.
func parseInfo(text string) ServerInfo {
	var s ServerInfo
	num := func(v string) int64 { n, _ := strconv.ParseInt(v, 10, 64); return n }
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch k {
		case "redis_version":
			s.Version = v
		case "redis_mode":
			s.Mode = v
		case "role":
			s.Role = v
		case "uptime_in_seconds":
			s.Uptime = time.Duration(num(v)) * time.Second
		case "connected_clients":
			s.ConnectedClients = num(v)
		case "used_memory":
			s.UsedMemory = num(v)
		case "used_memory_peak":
			s.PeakMemory = num(v)
		case "maxmemory":
			s.MaxMemory = num(v)
		case "maxmemory_policy":
			s.MaxMemoryPolicy = v
		case "instantaneous_ops_per_sec":
			s.OpsPerSec = num(v)
		}
	}
	return s
}
