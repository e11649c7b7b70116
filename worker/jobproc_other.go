//go:build !linux

package worker

import "context"

// KillJobProcesses finds job processes through /proc on Linux; elsewhere it
// does nothing and reports none.
func KillJobProcesses(ctx context.Context, workerID string) (killed int, err error) {
	return 0, nil
}
