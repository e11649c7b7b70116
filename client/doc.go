// Package client is resque-go's public producer and inspector for Go
// applications: enqueue jobs (now, at a time, or after a delay) that Ruby
// Resque, php-resque, node-resque and resque-go workers run, and read
// queues, workers, failed jobs and counters, with the failed list's retry
// and remove. It shares the Redis layout of those systems (and of
// resque-web and resque-scheduler), so it can be used next to them.
//
//	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
//	if err != nil {
//		return err // errors.Is(err, client.ErrBadURL) for a malformed URL
//	}
//	defer c.Close()
//
//	// {"class":"Archive","args":[42,"master"],"id":"…","queue_time":…}
//	job, err := c.Enqueue(ctx, "archive", "Archive", 42, "master")
//
//	// through the delayed queue (resque-scheduler's layout)
//	_, err = c.EnqueueIn(ctx, 10*time.Minute, "mail", "Reminder", userID)
//
//	// Ruby's exact {"class","args"}, args given as JSON
//	_, err = c.EnqueueRaw(ctx, "archive", "Archive", []byte(`[42,"master"]`), client.Plain())
//
//	queues, err := c.Queues(ctx)        // name and size of every queue
//	failed, err := c.Failed(ctx, 0, 20) // oldest first
//	err = c.RetryFailedJob(ctx, failed[0])
//
// The client also does what the resque-go command's admin commands do, with
// the types of the feature packages: recurring plans (AddPlan, Plans, Plan,
// RemovePlan; package plan), the delayed queue (DelayedJobs, DelayedCount,
// RemoveDelayed, ClearDelayed; package delayed), unique ids (UniqueIDs,
// UniqueID, ClearUnique; package unique), resque-scheduler's schedules
// (Schedules; package schedule), the failed list in bulk
// (RetryFailedWhere, RemoveFailedWhere, ClearFailed), the stats snapshot
// (Snapshot; package stats) and mass queues (SetMassRoute, MassRoutes,
// CreateMassBatch, OpenMassBatch, CommitMassBatch, PauseMassSource,
// ResumeMassSource, SetMassWeight, SetMassLimit, MassSettings, MassStatus,
// MassFailures, ReallocateMass; package massqueue).
//
// Every method takes a context and talks to Redis on each call; nothing is
// cached. Errors start with "client:", wrap the cause, never show the
// password, and match the sentinel errors below with errors.Is. Handlers
// that run jobs are registered with package worker and run with package
// app.
package client
