package doccheck

import (
	"slices"
	"testing"
)

func TestProcessWords(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"measured on this VM", []string{"this VM"}},
		{"TARGETS (issues 10 and 11)", []string{"issues 10"}},
		{"as the issue states them", []string{"the issue"}},
		{"no device was lent since stop 22", []string{"no device", "was lent", "stop 22"}},
		{"on a 16-core Xeon, Redis 7.0.15: 85,700 jobs/s", nil},
		{"stop claiming, let running jobs finish", nil},
		{"the process group and its session leader", nil},
		{"a job issued by the producer", nil},
		{"kill -STOP 1234", nil},
	} {
		if got := ProcessWords(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("ProcessWords(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
