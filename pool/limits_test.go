package pool

import (
	"slices"
	"strings"
	"testing"
)

// limits: and rates: give every child the caps and rates --limit and
// --rate give work; a bad value names its line.
func TestParseLimitsAndRates(t *testing.T) {
	cfg := parse(t, `
limits:
  Import: 5
  "queue:imports": 10
  "Import[args.0.tenant]": 2
rates:
  Mailer: 100/1m
workers:
  - queues: imports
`, LoadOptions{})
	child := cfg.Child(cfg.Sets[0])
	if want := []string{"Import=5", "Import[args.0.tenant]=2", "queue:imports=10"}; !slices.Equal(child.Limits, want) {
		t.Errorf("limits %q, want %q", child.Limits, want)
	}
	if want := []string{"Mailer=100/1m"}; !slices.Equal(child.Rates, want) {
		t.Errorf("rates %q, want %q", child.Rates, want)
	}
	if err := child.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	_, err := Parse("pool.yml", []byte("workers:\n  - queues: q\nrates:\n  Mailer: 100/fortnight\n"), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "pool.yml:4") {
		t.Errorf("a bad rate: %v, want its line", err)
	}
}
