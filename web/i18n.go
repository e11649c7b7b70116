package web

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The dashboard's words are looked up in a message catalogue by their
// English text: English is the key and the fallback, so a word with no
// translation shows in English. Only the dashboard's own words go through
// it; nothing read from Redis (queue names, classes, args, errors) is ever
// translated.

// languages are the languages the dashboard speaks, the first the default.
func languages() []string { return []string{"en", "de"} }

// catalogue is language -> English text -> translation.
type catalogue map[string]map[string]string

func newCatalogue() catalogue {
	de := messagesDE()
	maps.Copy(de, messagesScanDE())
	return catalogue{"de": de}
}

// translate is s in lang, or s.
func (c catalogue) translate(lang, s string) string {
	if t, ok := c[lang][s]; ok {
		return t
	}
	return s
}

// language picks the language of a request from its Accept-Language
// header (RFC 9110: tags with q weights; "de-AT" matches "de"): the
// supported one with the highest weight, the default on a tie or none.
func language(r *http.Request) string {
	best, bestQ := languages()[0], 0.0
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			q = f
		}
		base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if q > bestQ && slices.Contains(languages(), base) {
			best, bestQ = base, q
		}
	}
	return best
}

// scriptMessages are the words app.js writes, in lang, as JSON for the
// page's data-messages attribute ("" for English, which app.js has).
func (c catalogue) scriptMessages(lang string) string {
	if lang == languages()[0] {
		return ""
	}
	m := map[string]string{}
	for _, s := range []string{"no workers", "no queues", "no resque-go processes", "no schedulers", "on", "idle",
		"master", "standby", "live, updated", "reconnecting; last update", "peak", "limit"} {
		m[s] = c.translate(lang, s)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// messagesDE is the German catalogue.
func messagesDE() map[string]string {
	return map[string]string{
		// layout and navigation
		"Overview":            "Übersicht",
		"Queues":              "Warteschlangen",
		"Failed":              "Fehlgeschlagen",
		"Delayed":             "Verzögert",
		"Plans":               "Pläne",
		"Schedules":           "Zeitpläne",
		"Unique ids":          "Eindeutige IDs",
		"Serial locks":        "Serielle Sperren",
		"Mass queues":         "Massen-Warteschlangen",
		"Calendars":           "Kalender",
		"Search":              "Suche",
		"Workers":             "Worker",
		"Audit":               "Protokoll",
		"Audit log":           "Protokoll",
		"Failed entry":        "Fehlgeschlagener Job",
		"Remove delayed jobs": "Verzögerte Jobs entfernen",
		"Done":                "Erledigt",
		"viewer":              "Betrachter",
		"operator":            "Operator",
		"admin":               "Administrator",
		// overview
		"updated":                   "aktualisiert",
		"live, updated":             "live, aktualisiert",
		"reconnecting; last update": "verbinde neu; zuletzt aktualisiert",
		"processed":                 "verarbeitet",
		"failed":                    "fehlgeschlagen",
		"in the failed list":        "in der Fehlerliste",
		"pending":                   "wartend",
		"working":                   "in Arbeit",
		"workers":                   "Worker",
		"Queue":                     "Warteschlange",
		"Jobs":                      "Jobs",
		"Oldest job waits":          "Ältester Job wartet seit",
		"no queues":                 "keine Warteschlangen",
		"Worker":                    "Worker",
		"Runtime":                   "Laufzeitumgebung",
		"Running":                   "Läuft",
		"For":                       "Seit",
		"on":                        "auf",
		"idle":                      "untätig",
		"no workers":                "keine Worker",
		"Hosts and processes":       "Hosts und Prozesse",
		"Host":                      "Host",
		"PID":                       "PID",
		"Slots busy":                "Belegte Slots",
		"Memory (RSS)":              "Speicher (RSS)",
		"CPU":                       "CPU",
		"Up":                        "Läuft seit",
		"Host CPU / memory / load":  "Host-CPU / Speicher / Last",
		"no resque-go processes":    "keine resque-go-Prozesse",
		"Schedulers":                "Scheduler",
		"Scheduler":                 "Scheduler",
		"Role":                      "Rolle",
		"Last pass":                 "Letzter Durchlauf",
		"Promoted":                  "Übernommen",
		"Fired":                     "Ausgelöst",
		"master":                    "Master",
		"standby":                   "Bereitschaft",
		"no schedulers":             "keine Scheduler",
		"version":                   "Version",
		"mode / role":               "Modus / Rolle",
		"uptime":                    "Laufzeit",
		"clients":                   "Clients",
		"memory":                    "Speicher",
		"peak":                      "Spitze",
		"limit":                     "Grenze",
		"eviction":                  "Verdrängung",
		"ops/s":                     "Befehle/s",
		// history
		"Processed and failed":      "Verarbeitet und fehlgeschlagen",
		"per minute":                "pro Minute",
		"per hour":                  "pro Stunde",
		"per day":                   "pro Tag",
		"each point the average of": "jeder Punkt der Durchschnitt von",
		"busiest":                   "Spitze",
		"at":                        "um",
		"history range":             "Zeitraum",
		"Kept in Redis by every resque-go process:": "Von jedem resque-go-Prozess in Redis gehalten:",
		"keys, at most":   "Schlüssel, höchstens",
		"hash fields and": "Hash-Felder und",
		"whatever the load. Drawn as of page load;": "unabhängig von der Last. Stand beim Laden der Seite;",
		"every bucket as JSON":                      "alle Werte als JSON",
	}
}
