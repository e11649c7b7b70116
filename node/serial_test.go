package node_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/node"
)

// A serial queue must be named in the queue list (a glob cannot be serial).
func TestSerialQueuesMustBeNamed(t *testing.T) {
	t.Parallel()
	ok := node.Config{Queues: "critical,reports,*", Serial: []string{"reports"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", ok, err)
	}
	for _, bad := range []node.Config{
		{Queues: "critical,*", Serial: []string{"reports"}},
		{Queues: "critical,rep*", Serial: []string{"rep*"}},
	} {
		err := bad.Validate()
		if !errors.Is(err, node.ErrConfig) || !strings.Contains(err.Error(), "--serial") {
			t.Errorf("Validate(%+v) = %v, want a --serial config error", bad, err)
		}
	}
}
