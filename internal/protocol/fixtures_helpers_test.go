package protocol_test

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/fixtures"
)

// fixturePayload is one payload found in a captured dump, with where it came
// from so a failure names the fixture.
type fixturePayload struct {
	where string
	raw   string
}

// fixtureQueuePayloads returns every list item under a "resque:queue:" key in
// every fixture file of every origin.
func fixtureQueuePayloads(t testing.TB) []fixturePayload {
	t.Helper()
	var out []fixturePayload
	for _, dir := range fixtures.Dirs() {
		for _, sc := range fixtures.Scenarios(dir) {
			d := fixtures.MustLoad(dir, sc)
			for _, name := range d.Names() {
				if !strings.HasPrefix(name, "resque:queue:") {
					continue
				}
				for i, v := range d.List(name) {
					out = append(out, fixturePayload{
						where: dir + "/" + sc + " " + name + "[" + strconv.Itoa(i) + "]",
						raw:   v,
					})
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no queue payloads found in the fixtures")
	}
	return out
}

// fixtureWorkerIDs returns every member of every "resque:workers" set in the
// fixtures, deduplicated and sorted.
func fixtureWorkerIDs(t testing.TB) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, dir := range fixtures.Dirs() {
		for _, sc := range fixtures.Scenarios(dir) {
			for _, id := range fixtures.MustLoad(dir, sc).List("resque:workers") {
				seen[id] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("no worker ids found in the fixtures")
	}
	return out
}

// topLevelKeys returns the keys of the JSON object doc in the order they
// appear, failing the test when doc is not an object.
func topLevelKeys(t testing.TB, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s (%v)", doc, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("reading key of %s: %v", doc, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("reading value of %s: %v", doc, err)
		}
	}
	return keys
}

// rawFields decodes a JSON object into its raw field values.
func rawFields(t testing.TB, doc []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("not a JSON object: %s: %v", doc, err)
	}
	return m
}
