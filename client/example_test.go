package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/plan"
	"github.com/resque-go/resque-go/worker"
)

// Enqueue a job now and look at it in its queue.
func ExampleClient_Enqueue() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err) // errors.Is(err, client.ErrBadURL)
	}
	defer c.Close()
	ctx := context.Background()

	// {"class":"Archive","args":[42,"master"],"id":"…","queue_time":…}
	job, err := c.Enqueue(ctx, "archive", "Archive", 42, "master")
	if err != nil {
		log.Fatal(err)
	}
	next, err := c.Peek(ctx, "archive", 0, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(next[0].Class, string(next[0].Args), next[0].ID == job.ID)

	// Ruby's exact {"class","args"}, args given as JSON
	if _, err := c.EnqueueRaw(ctx, "archive", "Archive", []byte(`[43,"master"]`), client.Plain()); err != nil {
		log.Fatal(err)
	}
	n, err := c.ClearQueue(ctx, "archive")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cleared", n)
	// Output:
	// Archive [42,"master"] true
	// cleared 2
}

// Enqueue a job to run in ten minutes, through the delayed queue
// (resque-scheduler's layout): it is not in its queue yet.
func ExampleClient_EnqueueIn() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	if _, err := c.EnqueueIn(ctx, 10*time.Minute, "mail", "Reminder", "user-7"); err != nil {
		log.Fatal(err)
	}
	waiting, err := c.DelayedCount(ctx, delayed.Filter{Queue: "mail"})
	if err != nil {
		log.Fatal(err)
	}
	queued, err := c.QueueSize(ctx, "mail")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("delayed:", waiting.Items, "queued:", queued)

	if _, err := c.ClearDelayed(ctx, nil); err != nil {
		log.Fatal(err)
	}
	// Output:
	// delayed: 1 queued: 0
}

// List the delayed jobs of a queue and remove those of one class.
func ExampleClient_DelayedJobs() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	morning := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	if _, err := c.EnqueueAt(ctx, morning, "mail", "Reminder", "user-7"); err != nil {
		log.Fatal(err)
	}
	if _, err := c.EnqueueAt(ctx, morning.Add(time.Hour), "mail", "Digest", "weekly"); err != nil {
		log.Fatal(err)
	}

	items, err := c.DelayedJobs(ctx, delayed.Filter{Queue: "mail"}, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range items {
		fmt.Println(it.At.UTC().Format(time.DateTime), it.Class, string(it.Args))
	}

	removed, err := c.RemoveDelayed(ctx, delayed.Filter{Class: "Reminder"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	left, err := c.DelayedCount(ctx, delayed.Filter{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("removed", removed.Removed, "left", left.Items)

	if _, err := c.ClearDelayed(ctx, nil); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 2030-01-07 09:00:00 Reminder ["user-7"]
	// 2030-01-07 10:00:00 Digest ["weekly"]
	// removed 1 left 1
}

// Add a recurring plan (resque-v3's layout): resque-go workers and
// schedulers fire it at every slot, each slot exactly once.
func ExampleClient_AddPlan() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	id, err := c.AddPlan(ctx, plan.Plan{ID: "nightly-report", Queue: "reports", Class: "Report",
		Args: []byte(`{"format":"pdf"}`), Cron: "0 3 * * *", Timezone: "Europe/Prague"})
	if err != nil {
		log.Fatal(err) // errors.Is(err, client.ErrInvalid), client.ErrPlanExists
	}

	plans, err := c.Plans(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range plans {
		slots, err := plan.Upcoming(p, 3)
		if err != nil {
			log.Fatal(err)
		}
		loc, _ := time.LoadLocation(p.Timezone)
		fmt.Print(p.ID, " ", p.Class, " ", p.Cron, ":")
		for _, s := range slots {
			fmt.Print(" ", s.In(loc).Format("15:04"))
		}
		fmt.Println()
	}

	if err := c.RemovePlan(ctx, id); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Plan(ctx, id); errors.Is(err, client.ErrNoSuchPlan) {
		fmt.Println("removed", id)
	}
	// Output:
	// nightly-report Report 0 3 * * *: 03:00 03:00 03:00
	// removed nightly-report
}

// Keep plans off holidays with a calendar, and pause and resume a group of
// plans: a paused plan is off the schedule (no scheduler fires it) and,
// once resumed, fires the slots it missed by its misfire policy.
func ExampleClient_AddCalendar() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	err = c.AddCalendar(ctx, plan.Calendar{Name: "holidays", Timezone: "Europe/Prague",
		Dates: []string{"2026-12-25", "2027-01-01"}, Cron: []string{"* * * * 0,6"}}, true)
	if err != nil {
		log.Fatal(err) // errors.Is(err, client.ErrInvalid), client.ErrCalendarExists
	}
	id, err := c.AddPlan(ctx, plan.Plan{ID: "office-report", Queue: "reports", Class: "Report",
		Cron: "0 9 * * *", Timezone: "Europe/Prague", Misfire: plan.Skip, Calendar: "holidays", Group: "reports"})
	if err != nil {
		log.Fatal(err)
	}

	n, err := c.PausePlanGroup(ctx, "reports")
	if err != nil {
		log.Fatal(err)
	}
	p, err := c.Plan(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("paused", n, p.ID, p.Paused)
	if n, err = c.ResumePlanGroup(ctx, "reports"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("resumed", n)

	if err := c.RemovePlan(ctx, id); err != nil {
		log.Fatal(err)
	}
	if err := c.RemoveCalendar(ctx, "holidays"); err != nil {
		log.Fatal(err) // client.ErrInvalid while a plan names it
	}
	// Output:
	// paused 1 office-report true
	// resumed 1
}

// Read the failed list and retry an entry: its job goes back to its
// queue (Ruby's requeue: the entry stays, marked retried).
func ExampleClient_RetryFailed() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	// A job whose handler fails, worked by a node until its queue is empty.
	if _, err := c.Enqueue(ctx, "images", "Resize", "cat.png"); err != nil {
		log.Fatal(err)
	}
	reg := worker.NewRegistry()
	reg.Register("Resize", func(ctx context.Context, job *worker.Job) error {
		return errors.New("disk full")
	})
	n, err := node.New(node.Config{Redis: node.Redis{URL: os.Getenv("REDIS_URL")}, Queues: "images",
		Drain: true, FailRetries: 1}, reg)
	if err != nil {
		log.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	<-n.Done()

	failed, err := c.FailedWhere(ctx, client.FailedFilter{Queue: "images"}, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range failed {
		fmt.Println(f.Job.Class, string(f.Job.Args), f.Error)
		if _, err := c.RetryFailed(ctx, f.Index); err != nil {
			log.Fatal(err) // errors.Is(err, client.ErrNoSuchEntry): someone else removed it
		}
	}
	queued, err := c.QueueSize(ctx, "images")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("queued again:", queued)

	if _, err := c.ClearQueue(ctx, "images"); err != nil {
		log.Fatal(err)
	}
	if _, err := c.ClearFailed(ctx, client.FailedFilter{}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// Resize ["cat.png"] disk full
	// queued again: 1
}

// Pause a queue: workers (resque-go's, and Ruby's with resque-pause or
// resque-queue-control) stop taking its jobs within a second; enqueueing
// goes on.
func ExampleClient_PauseQueue() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	if err := c.PauseQueue(ctx, "reports"); err != nil {
		log.Fatal(err)
	}
	paused, err := c.PausedQueues(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("paused:", paused)
	was, err := c.ResumeQueue(ctx, "reports")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("was paused:", was)
	// Output:
	// paused: [reports]
	// was paused: true
}

// Tag a job, find it by its tag, and read its events.
func ExampleClient_JobsByTag() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	job, err := c.EnqueueRaw(ctx, "reports", "Report", []byte(`[7]`), client.Tags("customer-7"), client.WithEvent())
	if err != nil {
		log.Fatal(err)
	}
	jobs, _, err := c.JobsByTag(ctx, "customer-7", 0, 10)
	if err != nil {
		log.Fatal(err)
	}
	events, err := c.JobEvents(ctx, job.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(jobs[0].ID == job.ID, events[0].Event)
	if _, err := c.ClearQueue(ctx, "reports"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// true enqueued
}

// List the caps and rates workers use, with their running, parked and waiting jobs.
func ExampleClient_Limits() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		return
	}
	defer c.Close()
	limits, err := c.Limits(context.Background())
	if err != nil {
		return
	}
	for _, l := range limits {
		fmt.Println(l.Name, l.Running, l.Parked, l.Waiting)
	}
}

// Enqueue a group of jobs and a callback enqueued once, when the last of
// them has ended, with the group's counts appended to its args.
func ExampleClient_OnGroupComplete() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	album := fmt.Sprintf("album-%d", time.Now().UnixNano())
	for i := 0; i < 3; i++ {
		if _, err := c.EnqueueRaw(ctx, "thumbs", "Thumb", []byte(fmt.Sprintf("[%d]", i)), client.Group(album)); err != nil {
			log.Fatal(err)
		}
	}
	// seals the group: AlbumReady is enqueued when the three have ended
	fired, err := c.OnGroupComplete(ctx, album, "albums", "AlbumReady", 7)
	if err != nil {
		log.Fatal(err)
	}
	st, err := c.GroupInfo(ctx, album)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fired, st.Total, st.Pending, st.Sealed)
	if _, err := c.ClearQueue(ctx, "thumbs"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// false 3 3 true
}

// Search the failed list, the delayed queue and the queues for a job by a
// part of its args, as found, in small steps.
func ExampleClient_Search() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	if _, err := c.Enqueue(ctx, "orders", "Ship", "ann@example.com", map[string]any{"order": "A-1001"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.EnqueueIn(ctx, time.Hour, "orders", "Ship", "bob@example.com", map[string]any{"order": "A-1002"}); err != nil {
		log.Fatal(err)
	}
	var hits []string
	st, err := c.Search(ctx, client.SearchQuery{Text: "A-100"}, func(h client.SearchHit) bool {
		hits = append(hits, fmt.Sprintf("%s %s %s", h.Place, h.Job.Class, h.Job.Args))
		return len(hits) < 50 // false stops the search
	})
	if err != nil {
		log.Fatal(err)
	}
	slices.Sort(hits) // the places are read at the same time
	for _, h := range hits {
		fmt.Println(h)
	}
	fmt.Println("every entry read:", st.Complete)

	if _, err := c.ClearQueue(ctx, "orders"); err != nil {
		log.Fatal(err)
	}
	if _, err := c.RemoveDelayed(ctx, delayed.Filter{Queue: "orders"}, nil); err != nil {
		log.Fatal(err)
	}
	// Output:
	// delayed Ship ["bob@example.com",{"order":"A-1002"}]
	// queued Ship ["ann@example.com",{"order":"A-1001"}]
	// every entry read: true
}
