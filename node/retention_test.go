package node_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/node"
)

// Retention travels in the node config a pool manager hands its children
// (ages as strings, "30d" read too), and a negative limit is a config
// error naming the field.
func TestConfigRetentionJSON(t *testing.T) {
	t.Parallel()
	cfg := node.Config{Queues: "a", Retention: failure.Retention{FailedMax: 5, FailedMaxAge: 48 * time.Hour, Archive: "/tmp/x.jsonl"}}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"retention":{"failed_max":5,"archive":"/tmp/x.jsonl","failed_max_age":"48h0m0s"}`) {
		t.Fatalf("JSON %s", b)
	}
	back, err := node.Decode(strings.NewReader(string(b)))
	if err != nil || back.Retention != cfg.Retention {
		t.Fatalf("decoded %+v, %v", back.Retention, err)
	}
	plain, _ := json.Marshal(node.Config{Queues: "a"})
	if strings.Contains(string(plain), "retention") {
		t.Fatalf("a config without retention says %s", plain)
	}
	back, err = node.Decode(strings.NewReader(`{"queues":"a","retention":{"retries_max_age":"30d"}}`))
	if err != nil || back.Retention.RetriesMaxAge != 30*24*time.Hour {
		t.Fatalf("decoded %+v, %v", back.Retention, err)
	}
	err = node.Config{Queues: "a", Retention: failure.Retention{RetriesMax: -1}}.Validate()
	if !errors.Is(err, node.ErrConfig) || err.Error() != "node: Config.Retention.RetriesMax: must not be negative" {
		t.Fatalf("Validate: %v", err)
	}
}
