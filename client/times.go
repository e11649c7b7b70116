package client

import (
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// parseTime reads a time as Resque software stores it, or returns zero (see
// protocol.ParseStoredTime).
func parseTime(s string) time.Time { return protocol.ParseStoredTime(s) }
