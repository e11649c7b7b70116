package failure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention says how much of the failed and retries lists to keep. The
// zero value keeps everything (no trimming: the default). A Max trims the
// oldest entries (the head of the list, where every writer appends at the
// tail) beyond that many; a MaxAge trims the entries whose failed_at is
// older, from the head, up to the first younger one. An entry whose
// failed_at cannot be read is kept by MaxAge (and counted in the log); Max
// still counts it.
type Retention struct {
	FailedMax     int           `json:"failed_max,omitempty"`
	FailedMaxAge  time.Duration `json:"failed_max_age,omitempty"`
	RetriesMax    int           `json:"retries_max,omitempty"`
	RetriesMaxAge time.Duration `json:"retries_max_age,omitempty"`
	// Archive, when set, is a file each trimmed entry is appended to first,
	// as one JSON line ({"list","archived_at","entry"}), written and
	// fsynced before the entries leave Redis. A crash between the two, or
	// an entry retried in between (it is then not removed), leaves a line
	// for an entry still in the list; never an entry removed without its
	// line.
	Archive string `json:"archive,omitempty"`
}

// On reports whether r trims anything.
func (r Retention) On() bool {
	return r.FailedMax > 0 || r.FailedMaxAge > 0 || r.RetriesMax > 0 || r.RetriesMaxAge > 0
}

// Validate refuses negative limits and an archive without a limit; its
// errors name the field.
func (r Retention) Validate() error {
	for _, f := range []struct {
		name string
		bad  bool
	}{
		{"FailedMax", r.FailedMax < 0}, {"FailedMaxAge", r.FailedMaxAge < 0},
		{"RetriesMax", r.RetriesMax < 0}, {"RetriesMaxAge", r.RetriesMaxAge < 0},
	} {
		if f.bad {
			return fmt.Errorf("failure: Retention.%s: must not be negative", f.name)
		}
	}
	if r.Archive != "" && !r.On() {
		return errors.New("failure: Retention.Archive is set but no limit is: nothing would be trimmed")
	}
	return nil
}

// retentionJSON is Retention's JSON form: ages as strings ("720h0m0s", or
// as ParseAge reads them).
type retentionJSON struct {
	*retentionAlias
	FailedMaxAge  string `json:"failed_max_age,omitempty"`
	RetriesMaxAge string `json:"retries_max_age,omitempty"`
}

type retentionAlias Retention

func ageString(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// MarshalJSON writes the ages as Go durations.
func (r Retention) MarshalJSON() ([]byte, error) {
	return json.Marshal(retentionJSON{retentionAlias: (*retentionAlias)(&r),
		FailedMaxAge: ageString(r.FailedMaxAge), RetriesMaxAge: ageString(r.RetriesMaxAge)})
}

// UnmarshalJSON reads what MarshalJSON writes, and ages as ParseAge reads
// them ("30d").
func (r *Retention) UnmarshalJSON(data []byte) error {
	var a retentionAlias
	j := retentionJSON{retentionAlias: &a}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	var err error
	if a.FailedMaxAge, err = ParseAge(j.FailedMaxAge); err != nil {
		return fmt.Errorf("failed_max_age: %w", err)
	}
	if a.RetriesMaxAge, err = ParseAge(j.RetriesMaxAge); err != nil {
		return fmt.Errorf("retries_max_age: %w", err)
	}
	*r = Retention(a)
	return nil
}

// ParseAge reads an age: days ("30d"), weeks ("2w") or a Go duration
// ("720h", "90m"); "" is 0.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	for unit, d := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			f, err := strconv.ParseFloat(n, 64)
			if err != nil || f <= 0 || f > 100*365 {
				return 0, fmt.Errorf("%q: want an age such as 30d, 2w or 12h", s)
			}
			return time.Duration(f * float64(d)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want an age such as 30d, 2w or 12h", s)
	}
	return d, nil
}
