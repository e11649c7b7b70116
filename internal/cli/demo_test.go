package cli

import (
	"bytes"
	"context"
	"regexp"
	"testing"
)

// The demo's counters say what they count: queue_time is a sum of
// milliseconds, not a time stamp.
func TestDemoCountersSayWhatTheyCount(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := runDemo(context.Background(), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`\n  resque:stat:processed +11  jobs done, failed ones included`),
		regexp.MustCompile(`\n  resque:queuestat:demo:dequeued:mail +11  jobs taken from queue mail on host demo\n`),
		regexp.MustCompile(`\n  resque:queuestat:demo:queue_time:mail +\d+  ms waited in the queue, summed: \d+[dhms]\S* `),
		regexp.MustCompile(`\n  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC  Error: boom <1>\n`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("demo output does not match %s:\n%s", want, out.String())
		}
	}
	if regexp.MustCompile(`\d{4}/\d\d/\d\d`).MatchString(out.String()) {
		t.Errorf("a time in the stored form, not the one text output uses:\n%s", out.String())
	}
}
