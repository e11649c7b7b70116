package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/rdb"
)

// publicClient connects the public client with the command's Redis flags.
func publicClient(c *ucli.Context) (*client.Client, error) {
	r := redisConfig(c)
	tlsCfg, err := (rdb.TLSFiles{CAFile: r.TLSCAFile, CertFile: r.TLSCertFile, KeyFile: r.TLSKeyFile,
		ServerName: r.TLSServerName, InsecureSkipVerify: r.TLSInsecureSkipVerify}).Config()
	if err != nil {
		return nil, usageError{err}
	}
	cl, err := client.New(client.Options{URL: r.URL, Namespace: r.Namespace, TLS: tlsCfg, SentinelPassword: r.SentinelPassword})
	if err != nil {
		return nil, usageError{err}
	}
	return cl, nil
}

// queueLocks lists the held serial-queue locks with their holders.
func queueLocks(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("locks takes no argument")
	}
	cl, err := publicClient(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	locks, err := cl.SerialLocks(c.Context)
	if err != nil {
		return err
	}
	type holder struct {
		Worker string     `json:"worker"`
		Class  string     `json:"class"`
		Since  *time.Time `json:"since"`
	}
	type row struct {
		Queue string `json:"queue"`
		Token string `json:"token"`
		// TTLSeconds is null for a lock without an expiry.
		TTLSeconds *float64 `json:"ttl_seconds"`
		Holders    []holder `json:"holders"`
		Stale      bool     `json:"stale"`
		Problem    string   `json:"problem,omitempty"`
	}
	rows := make([]row, len(locks))
	for i, l := range locks {
		r := row{Queue: l.Queue, Token: l.Token, Holders: []holder{}, Stale: len(l.Holders) == 0 && l.Problem == "", Problem: l.Problem}
		if l.TTL >= 0 && l.Problem == "" {
			s := l.TTL.Seconds()
			r.TTLSeconds = &s
		}
		for _, h := range l.Holders {
			x := holder{Worker: h.Worker, Class: h.Class}
			if !h.Since.IsZero() {
				t := h.Since.UTC()
				x.Since = &t
			}
			r.Holders = append(r.Holders, x)
		}
		rows[i] = r
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, listOf(rows))
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tEXPIRES IN\tHELD BY\tTOKEN")
	for _, r := range rows {
		if r.Problem != "" {
			fmt.Fprintf(tw, "%s\t?\t(%s)\t\n", r.Queue, r.Problem)
			continue
		}
		ttl := "never"
		if r.TTLSeconds != nil {
			ttl = fmt.Sprintf("%.1fs", *r.TTLSeconds)
		}
		var by []string
		for _, h := range r.Holders {
			by = append(by, h.Worker+" ("+h.Class+")")
		}
		if r.Stale {
			by = []string{"stale: no worker runs a job of it"}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Queue, ttl, strings.Join(by, ", "), r.Token)
	}
	return tw.Flush()
}

// queueUnlock releases QUEUE's serial lock while --token holds it.
func queueUnlock(c *ucli.Context) error {
	q, err := queueArg(c)
	if err != nil {
		return err
	}
	token := c.String("token")
	if token == "" {
		return usagef("%s needs --token (the lock's token, from queue locks)", c.Command.FullName())
	}
	cl, err := publicClient(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	err = cl.ReleaseSerialLock(c.Context, q, token)
	switch {
	case errors.Is(err, client.ErrLockChanged):
		return fmt.Errorf("queue %s: the lock is not held by that token (released, expired or taken again meanwhile); nothing was done", q)
	case err != nil:
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"queue": q, "released": true})
	}
	fmt.Fprintf(c.App.Writer, "queue %s: lock released\n", q)
	return nil
}
