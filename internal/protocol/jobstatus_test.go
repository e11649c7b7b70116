package protocol_test

import (
	"strconv"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
)

func TestFinishedJobStatus(t *testing.T) {
	t.Parallel()
	v3 := &protocol.Payload{ID: "x", IsMonitored: true}
	php := &protocol.Payload{ID: "x"}
	ruby := &protocol.Payload{}
	for _, tc := range []struct {
		p       *protocol.Payload
		outcome string
		want    string
	}{
		{v3, "ok", "v3:finished"}, {v3, "fail", "v3:failed"}, {v3, "retry", "v3:retried"},
		{v3, "reschedule", "v3:waiting"}, {v3, "discard", "v3:finished"},
		{php, "ok", "php:" + strconv.Itoa(protocol.PHPStatusComplete)}, {php, "fail", "php:3"},
		{php, "retry", "php:1"}, {php, "reschedule", "php:1"}, {php, "discard", "php:4"},
		{ruby, "fail", ""}, {nil, "ok", ""},
	} {
		if got := protocol.FinishedJobStatus(tc.p, tc.outcome); got != tc.want {
			t.Errorf("%+v %s: %q, want %q", tc.p, tc.outcome, got, tc.want)
		}
	}
}
