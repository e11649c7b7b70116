package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
)

// Tags as an operator meets them: listed with their counts, each tag's jobs
// with their state, names that are unicode, HTML or spaces shown escaped
// and reachable, and the keyspace walked a bounded page at a time.
func TestTagPagesAndRoutes(t *testing.T) {
	e := newEnv(t)
	tags := []string{"billing", "über-größe-日本", `<script>alert(1)</script>`, `a"b'c&d`, "x/y?z#w", "100%d"}
	ids := map[string][]string{}
	for i, tag := range tags {
		for j := 0; j <= i; j++ {
			job, err := e.c.EnqueueRaw(ctx(), "tagged", "TagJob", []byte(fmt.Sprintf("[%d,%d]", i, j)), client.Tags(tag))
			if err != nil {
				t.Fatalf("enqueue with tag %q: %v", tag, err)
			}
			ids[tag] = append(ids[tag], job.ID)
		}
	}
	// a tag with a space, as another producer or a hand could write it
	e.do("ZADD", e.key("resque-go:tag:with space"), time.Now().UnixMilli(), "hand-1")
	// a key of another type under the prefix is left out, not an error
	e.do("SET", e.key("resque-go:tag:not-a-zset"), "x")

	for _, lang := range []string{"en", "de"} {
		r := e.request("GET", "tags", viewerSecret, "", "", "Accept-Language", lang)
		checkPage(t, "tags "+lang, r)
		for i, tag := range append(tags, "with space") {
			n := i + 1
			if tag == "with space" {
				n = 1
			}
			want := fmt.Sprintf(`<a href="/tags/%s">%s</a></td><td class="num">%d</td>`, htmlEscape(url.PathEscape(tag)), htmlEscape(tag), n)
			if !strings.Contains(r.body, want) {
				t.Errorf("tags page (%s) lacks %s", lang, want)
			}
		}
		if strings.Contains(r.body, "not-a-zset") {
			t.Errorf("a key of another type listed as a tag")
		}
		if lang == "de" && (!strings.Contains(r.body, "<h1>Tags</h1>") || !strings.Contains(r.body, "Jobs zeigen")) {
			t.Errorf("German tags page: %.600s", r.body)
		}
	}

	var list struct {
		Tags []struct {
			Tag  string `json:"tag"`
			Jobs int64  `json:"jobs"`
		} `json:"tags"`
		Next string `json:"next"`
	}
	r := e.get("api/tags", viewerSecret)
	if r.code != http.StatusOK {
		t.Fatalf("api/tags: %d %s", r.code, r.body)
	}
	r.decode(t, &list)
	listed := map[string]int64{}
	for _, x := range list.Tags {
		listed[x.Tag] = x.Jobs // SCAN may name a key twice while Redis resizes its table
	}
	if len(listed) != len(tags)+1 || listed["with space"] != 1 || listed[tags[1]] != 2 || list.Next != "" {
		t.Errorf("api/tags: %+v", list)
	}

	for i, tag := range tags {
		p := "tags/" + url.PathEscape(tag)
		r := e.request("GET", p, viewerSecret, "", "", "Accept-Language", "de")
		checkPage(t, p, r)
		if !strings.Contains(r.body, "<h1>Tag "+htmlEscape(tag)+"</h1>") {
			t.Errorf("%s: title: %.400s", p, r.body)
		}
		if want := fmt.Sprintf("%d Jobs mit diesem Tag sind nicht beendet", i+1); !strings.Contains(r.body, want) {
			t.Errorf("%s lacks %q", p, want)
		}
		for _, id := range ids[tag] {
			if !strings.Contains(r.body, `<td class="mono">`+id+`</td>`) || !strings.Contains(r.body, "search?q="+id) {
				t.Errorf("%s lacks job %s", p, id)
			}
		}
		var one struct {
			Tag   string `json:"tag"`
			Total int    `json:"total"`
			Jobs  []struct {
				ID         string    `json:"id"`
				EnqueuedAt time.Time `json:"enqueued_at"`
				State      string    `json:"state"`
			} `json:"jobs"`
		}
		ar := e.get("api/"+p, viewerSecret)
		if ar.code != http.StatusOK {
			t.Fatalf("api/%s: %d %s", p, ar.code, ar.body)
		}
		ar.decode(t, &one)
		if one.Tag != tag || one.Total != i+1 || len(one.Jobs) != i+1 {
			t.Errorf("api/%s: %+v, want %v", p, one, ids[tag])
		}
		for k, j := range one.Jobs {
			if !slices.Contains(ids[tag], j.ID) || j.State != "" || (k > 0 && j.EnqueuedAt.After(one.Jobs[k-1].EnqueuedAt)) {
				t.Errorf("api/%s: job %d %+v: not one of %v, newest first, with no end", p, k, j, ids[tag])
			}
		}
	}
	sp := e.get("tags/with%20space", viewerSecret)
	checkPage(t, "tag with a space", sp)
	if !strings.Contains(sp.body, "<h1>Tag with space</h1>") || !strings.Contains(sp.body, "hand-1") {
		t.Errorf("tag with a space: %.600s", sp.body)
	}
	// the form's ?tag= goes to the tag's page
	if r := e.get("tags?tag="+url.QueryEscape("über-größe-日本"), viewerSecret); r.code != http.StatusOK ||
		!strings.Contains(r.body, "<h1>Tag über-größe-日本</h1>") {
		t.Errorf("tags?tag=: %d %.300s", r.code, r.body)
	}
	// a job that ended leaves the index, and the page
	e.do("ZREM", e.key("resque-go:tag:billing"), ids["billing"][0])
	if r := e.get("tags/billing", viewerSecret); !strings.Contains(r.body, "0 jobs with this tag have not ended") ||
		!strings.Contains(r.body, "no jobs") {
		t.Errorf("emptied tag: %.600s", r.body)
	}
	if r := e.get("tags?cursor=abc", viewerSecret); r.code != http.StatusBadRequest {
		t.Errorf("a cursor that is not a number: %d", r.code)
	}
	if r := e.get("tags", ""); r.code != http.StatusUnauthorized {
		t.Errorf("tags without a credential: %d", r.code)
	}
}

// A keyspace with many keys is walked a bounded page at a time: every
// tag is found by following next, and no page asks Redis for more than
// ten SCAN calls.
func TestTagsPagedThroughALargeKeyspace(t *testing.T) {
	e := newEnv(t)
	const other, tagged = 30_000, 120
	args := []any{}
	for i := 0; i < other; i++ {
		args = append(args, e.key(fmt.Sprintf("filler:%d", i)), "x")
		if len(args) == 2000 {
			e.do("MSET", args...)
			args = args[:0]
		}
	}
	for i := 0; i < tagged; i++ {
		e.do("ZADD", e.key(fmt.Sprintf("resque-go:tag:t%03d", i)), i, fmt.Sprintf("id-%d", i))
	}
	seen := map[string]bool{}
	cursor, pages := "", 0
	for {
		var list struct {
			Tags []struct {
				Tag string `json:"tag"`
			} `json:"tags"`
			Next string `json:"next"`
		}
		r := e.get("api/tags?cursor="+cursor, viewerSecret)
		if r.code != http.StatusOK {
			t.Fatalf("api/tags: %d %s", r.code, r.body)
		}
		r.decode(t, &list)
		for _, x := range list.Tags {
			seen[x.Tag] = true
		}
		pages++
		if list.Next == "" {
			break
		}
		if pages > 1000 {
			t.Fatal("the scan does not end")
		}
		cursor = list.Next
	}
	if len(seen) != tagged {
		t.Errorf("%d tags found over %d pages, want %d", len(seen), pages, tagged)
	}
	t.Logf("%d tags among %d keys (the whole server's keyspace) in %d pages", tagged, other, pages)
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}

// The workers page says each worker's runtime and how long its job has
// run, in the page's language.
func TestWorkersRuntimeColumn(t *testing.T) {
	e := newEnv(t)
	seed(e)
	r := e.request("GET", "workers", viewerSecret, "", "", "Accept-Language", "de")
	checkPage(t, "workers", r)
	if !strings.Contains(r.body, "<th>Worker</th><th>Laufzeitumgebung</th>") || !strings.Contains(r.body, "<th>Seit</th>") {
		t.Errorf("workers page headings: %.1500s", r.body)
	}
	for _, rt := range []string{"ruby", "php", "node"} {
		if !strings.Contains(r.body, "</td><td>"+rt+"</td>") {
			t.Errorf("workers page lacks a %s worker", rt)
		}
	}
	if !strings.Contains(r.body, "<td>?</td>") {
		t.Errorf("a worker of no known runtime is not shown as ?")
	}
	// how long each job has run
	if !strings.Contains(r.body, `<span class="muted">auf `) || !regexp.MustCompile(`\n<td>\d+[dhms]( \d+[dhms])?</td>`).MatchString(r.body) {
		t.Errorf("workers page: no running job with its time")
	}
}
