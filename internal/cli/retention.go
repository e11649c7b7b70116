package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/failure"
)

// retentionFlags are the trimming settings work and scheduler take
// (failure.Retention); unset, nothing is trimmed.
func retentionFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.IntFlag{Name: "failed-max", Usage: "keep at most this many entries in failed, trimming the oldest (one elected process trims); 0: no limit", EnvVars: []string{"RESQUE_FAILED_MAX"}},
		&ucli.StringFlag{Name: "failed-max-age", Usage: "trim entries of failed older than this (30d, 2w, 12h); entries without a readable failed_at are kept; empty: no limit", EnvVars: []string{"RESQUE_FAILED_MAX_AGE"}},
		&ucli.IntFlag{Name: "retries-max", Usage: "as --failed-max, for the retries list", EnvVars: []string{"RESQUE_RETRIES_MAX"}},
		&ucli.StringFlag{Name: "retries-max-age", Usage: "as --failed-max-age, for the retries list", EnvVars: []string{"RESQUE_RETRIES_MAX_AGE"}},
		&ucli.StringFlag{Name: "failed-archive", Usage: "append every trimmed entry to this file as a JSON line (written and fsynced before the removal)", EnvVars: []string{"RESQUE_FAILED_ARCHIVE"}},
	}
}

// retentionFromFlags reads the retention flags; a bad value is a usage
// error naming the flag.
func retentionFromFlags(c *ucli.Context) (failure.Retention, error) {
	r := failure.Retention{FailedMax: c.Int("failed-max"), RetriesMax: c.Int("retries-max"), Archive: c.String("failed-archive")}
	for _, f := range []struct {
		name string
		n    int
	}{{"failed-max", r.FailedMax}, {"retries-max", r.RetriesMax}} {
		if f.n < 0 {
			return r, usagef("--%s %d: must not be negative (0: no limit)", f.name, f.n)
		}
	}
	var err error
	if r.FailedMaxAge, err = failure.ParseAge(c.String("failed-max-age")); err != nil {
		return r, usagef("--failed-max-age %v", err)
	}
	if r.RetriesMaxAge, err = failure.ParseAge(c.String("retries-max-age")); err != nil {
		return r, usagef("--retries-max-age %v", err)
	}
	if r.Archive != "" && !r.On() {
		return r, usagef("--failed-archive %q: give --failed-max, --failed-max-age, --retries-max or --retries-max-age too (nothing would be trimmed)", r.Archive)
	}
	return r, nil
}
