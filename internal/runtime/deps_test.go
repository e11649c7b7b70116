package runtime

import (
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
)

// A job's finish sends its id for dependencies only while they are in use,
// and its group whenever it has one: a plain job sends nothing.
func TestDepsOf(t *testing.T) {
	for _, tc := range []struct {
		payload   string
		on        bool
		id, group string
	}{
		{`{"class":"C","args":[]}`, false, "", ""},
		{`{"class":"C","args":[]}`, true, "", ""},
		{`{"class":"C","args":[],"id":"a"}`, false, "", ""},
		{`{"class":"C","args":[],"id":"a"}`, true, "a", ""},
		{`{"class":"C","args":[],"id":"a","group":"g"}`, false, "", "g"},
		{`{"class":"C","args":[],"group":7}`, true, "", ""},
	} {
		p, err := protocol.DecodePayload([]byte(tc.payload))
		if err != nil {
			t.Fatal(err)
		}
		if id, g := depsOf(p, tc.on); id != tc.id || g != tc.group {
			t.Errorf("%s on=%v: %q %q, want %q %q", tc.payload, tc.on, id, g, tc.id, tc.group)
		}
	}
}
