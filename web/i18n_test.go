package web_test

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/web"
)

// Accept-Language chooses the dashboard's words; what comes from Redis is
// shown as it is, whatever the language.
func TestAcceptLanguageGerman(t *testing.T) {
	e := newEnv(t)
	// payload texts that are also words of the catalogue
	e.do("SADD", e.key("queues"), "Queues")
	if _, err := e.c.Enqueue(ctx(), "Queues", "Overview", "Workers"); err != nil {
		t.Fatal(err)
	}
	e.do("SADD", e.key("workers"), "idle:42:Queues")
	e.do("SET", e.key("worker:idle:42:Queues"), `{"queue":"Queues","run_at":"2026-11-21T10:00:00Z","payload":{"class":"Overview","args":["processed"]}}`)

	de := e.request("GET", "", viewerSecret, "", "", "Accept-Language", "de-AT,de;q=0.9,en;q=0.5")
	checkPage(t, "overview in German", de)
	for _, want := range []string{`<html lang="de">`, `aria-current="page">Übersicht</a>`, `>Warteschlangen</a>`, `>Fehlgeschlagen</a>`,
		`<h1>Übersicht</h1>`, `<h2>Hosts und Prozesse</h2>`, `Verarbeitet und fehlgeschlagen`, `data-messages="`, `vic · Betrachter`,
		// payload text, untranslated
		`>Queues</a></td>`, `<span class="mono">Overview</span> <span class="muted">auf Queues</span>`, `idle:42:Queues`} {
		if !strings.Contains(de.body, want) {
			t.Errorf("German overview lacks %s", want)
		}
	}
	if !strings.Contains(de.head.Get("Vary"), "Accept-Language") {
		t.Errorf("Vary: %q", de.head.Get("Vary"))
	}
	q := e.request("GET", "queues/Queues", viewerSecret, "", "", "Accept-Language", "de")
	if !strings.Contains(q.body, `<h1>Warteschlange Queues</h1>`) && !strings.Contains(q.body, `<h1>Queue Queues</h1>`) {
		t.Errorf("queue page title: %.300s", q.body)
	}
	if !strings.Contains(q.body, `&#34;class&#34;: &#34;Overview&#34;`) || !strings.Contains(q.body, `&#34;Workers&#34;`) {
		t.Errorf("queue page: the payload is not shown as it is")
	}

	for _, h := range []string{"", "fr-FR,fr;q=0.9", "en;q=0.9,de;q=0.8", "de;q=0"} {
		en := e.request("GET", "", viewerSecret, "", "", "Accept-Language", h)
		if !strings.Contains(en.body, `<html lang="en">`) || !strings.Contains(en.body, `aria-current="page">Overview</a>`) ||
			strings.Contains(en.body, "data-messages") {
			t.Errorf("Accept-Language %q: not the English page", h)
		}
	}
}

// Every page, in German, shows none of the catalogue's English phrases:
// each template's words and each action's message go through it.
func TestI18nEveryPageInGerman(t *testing.T) {
	e := newEnv(t)
	seed(e)
	if _, err := e.c.EnqueueIn(ctx(), time.Hour, "later", "LaterJob", 1); err != nil {
		t.Fatal(err)
	}
	de := web.MessagesDE()
	var english []string
	for en, g := range de {
		if strings.Count(en, " ") >= 2 && !strings.Contains(g, en) && !strings.Contains(en, "%") {
			english = append(english, html.EscapeString(en))
		}
	}
	fl := e.failed("")
	pages := []string{"", "queues", "queues/odd", "queues/odd/clear", "failed", "failed/bulk?action=retry",
		"failed/bulk?action=remove&queue=odd", fmt.Sprintf("failed/%d?digest=%s", fl.Entries[0].Index, fl.Entries[0].Digest),
		"workers", "audit", "delayed", "delayed?queue=later", "delayed/bulk", "plans", "schedules", "unique", "serial", "mass",
		"calendars", "search", "search?q=GoJob", "tags", "job-events", "job-events?id=x", "no-such-page"}
	for _, p := range pages {
		for _, who := range []string{viewerSecret, adminSecret} {
			r := e.request("GET", p, who, "", "", "Accept-Language", "de")
			if !strings.Contains(r.body, `<html lang="de">`) {
				t.Errorf("GET /%s: not German: %d", p, r.code)
			}
			// app.js's words, English keys to German words
			body := regexp.MustCompile(` data-messages="[^"]*"`).ReplaceAllString(r.body, "")
			for _, en := range english {
				if strings.Contains(body, en) {
					t.Errorf("GET /%s in German shows %q", p, en)
				}
			}
		}
	}
	// an action's message
	r := e.request("POST", "queues/odd/pause", operatorSecret, "application/x-www-form-urlencoded", "", "Accept-Language", "de",
		"Origin", e.srv.URL, "Sec-Fetch-Site", "same-origin")
	if !strings.Contains(r.body, "Warteschlange odd pausiert: Worker nehmen keinen ihrer Jobs, bis sie fortgesetzt wird.") {
		t.Errorf("pause message in German: %d %.600s", r.code, r.body)
	}
}
