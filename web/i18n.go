package web

import (
	"encoding/json"
	"fmt"
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
	return catalogue{"de": messagesDE()}
}

// translate is s in lang, or s.
func (c catalogue) translate(lang, s string) string {
	if t, ok := c[lang][s]; ok {
		return t
	}
	return s
}

// format is format in lang filled with args.
func (c catalogue) format(lang, format string, args ...any) string {
	return fmt.Sprintf(c.translate(lang, format), args...)
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
	for _, s := range scriptWords() {
		m[s] = c.translate(lang, s)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// scriptWords are the words app.js writes.
func scriptWords() []string {
	return []string{"no workers", "no queues", "no resque-go processes", "no schedulers", "on", "idle",
		"master", "standby", "live, updated", "reconnecting; last update", "peak", "limit"}
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
		// every other page, its actions' messages and its errors
		"\"Remove all matching…\" counts them first.": "„Alle passenden entfernen…“ zählt sie zuerst.",
		"%d delayed items":               "%d verzögerte Einträge",
		"%d delayed items match":         "%d verzögerte Einträge passen zu",
		"%d due times":                   "%d Fälligkeitszeitpunkte",
		"%d entries":                     "%d Einträge",
		"%d entries in the failed list.": "%d Einträge in der Fehlerliste.",
		"%d entries skipped: no queue or payload to retry.": "%d Einträge übersprungen: keine Warteschlange oder Nutzlast zum Wiederholen.",
		"%d entries were gone meanwhile.":                   "%d Einträge waren inzwischen verschwunden.",
		"%d found":                                          "%d gefunden",
		"%d jobs":                                           "%d Jobs",
		"%d jobs waiting; position 0 is the next a worker takes.":      "%d Jobs warten; Position 0 ist der nächste, den ein Worker nimmt.",
		"%d jobs with this tag have not ended; newest first.":          "%d Jobs mit diesem Tag sind nicht beendet; neueste zuerst.",
		"(no filter: every delayed item, and the schedule is cleared)": "(kein Filter: jeder verzögerte Eintrag, und der Zeitplan wird geleert)",
		"(no filter: every entry)":                                     "(kein Filter: jeder Eintrag)",
		"(none recorded)":                                              "(keiner aufgezeichnet)",
		"(the first %d; narrow the search to see others)":              "(die ersten %d; grenzen Sie die Suche ein, um weitere zu sehen)",
		", every entry read":                                           ", jeder Eintrag gelesen",
		"1 delayed item":                                               "1 verzögerter Eintrag",
		"1 delayed item matches":                                       "1 verzögerter Eintrag passt zu",
		"1 entry":                                                      "1 Eintrag",
		"1 entry skipped: no queue or payload to retry.":               "1 Eintrag übersprungen: keine Warteschlange oder Nutzlast zum Wiederholen.",
		"1 entry was gone meanwhile.":                                  "1 Eintrag war inzwischen verschwunden.",
		"1 job":                                                        "1 Job",
		": %d entries read in %d Redis round trips, %.0f ms.":          ": %d Einträge in %d Redis-Roundtrips gelesen, %.0f ms.",
		"; oldest first, the order a scheduler promotes them.":         "; älteste zuerst, in der Reihenfolge, in der ein Scheduler sie übernimmt.",
		"A calendar that plans name cannot be removed: remove those plans, or add them again without it, first.":                                              "Ein Kalender, den Pläne nennen, kann nicht entfernt werden: Entfernen Sie zuerst diese Pläne oder legen Sie sie ohne ihn neu an.",
		"A job enqueued with tags is listed under each of them until it ends.":                                                                                "Ein mit Tags eingereihter Job steht unter jedem davon, bis er endet.",
		"A plan naming a calendar does not fire at the instants it excludes: whole dates, and every minute a cron line matches, in the calendar's time zone.": "Ein Plan, der einen Kalender nennt, löst zu den Zeitpunkten nicht aus, die dieser ausschließt: ganze Tage und jede Minute, auf die eine Cron-Zeile passt, in der Zeitzone des Kalenders.",
		"A serial queue runs one job at a time across every process: the slot that claims a job takes the queue's lock, refreshes it while the job runs and releases it with the job's end. A lock whose holder died lasts until it expires. A lock no registered worker holds is marked stale; releasing it lets the queue's next job start at once. Releasing the lock of a job still running lets a second job of the queue run beside it.": "Eine serielle Warteschlange führt über alle Prozesse hinweg einen Job nach dem anderen aus: Der Slot, der einen Job übernimmt, nimmt die Sperre der Warteschlange, erneuert sie, solange der Job läuft, und gibt sie mit dem Ende des Jobs frei. Eine Sperre, deren Halter gestorben ist, besteht, bis sie abläuft. Eine Sperre, die kein registrierter Worker hält, wird als verwaist markiert; sie freizugeben lässt den nächsten Job der Warteschlange sofort starten. Die Sperre eines noch laufenden Jobs freizugeben lässt einen zweiten Job der Warteschlange daneben laufen.",
		"A uid is queued or running while its job waits or runs; a deferred job is parked until that job succeeds. Clearing frees the uid and releases a parked job (it is enqueued, not dropped); a job of the uid still queued or running is left alone.":                                                                                                                                                                                    "Eine UID ist eingereiht oder laufend, solange ihr Job wartet oder läuft; ein zurückgestellter Job wird geparkt, bis dieser Job erfolgreich ist. Löschen gibt die UID frei und einen geparkten Job weiter (er wird eingereiht, nicht verworfen); ein noch wartender oder laufender Job der UID bleibt unberührt.",
		"Action":              "Aktion",
		"Active batch":        "Aktiver Stapel",
		"All tags":            "Alle Tags",
		"Allocation failures": "Zuteilungsfehler",
		"Args":                "Argumente",
		"Args (JSON array or object; empty: every job of the class)": "Argumente (JSON-Array oder -Objekt; leer: jeder Job der Klasse)",
		"Args or id contain":  "Argumente oder ID enthalten",
		"As stored":           "Wie gespeichert",
		"At their limit":      "An ihrer Grenze",
		"Back":                "Zurück",
		"Back to the queue":   "Zurück zur Warteschlange",
		"Backlog":             "Rückstand",
		"Backtrace":           "Backtrace",
		"Bad Gateway":         "Fehlerhaftes Gateway",
		"Bad Request":         "Ungültige Anfrage",
		"Batch pools":         "Stapel-Pools",
		"Batches":             "Stapel",
		"Batches (jobs left)": "Stapel (verbleibende Jobs)",
		"Calendar":            "Kalender",
		"Calendar %s":         "Kalender %s",
		"Cancel":              "Abbrechen",
		"Cancel requested for the job on %s: it ends in failed as ResqueGo::Cancelled.": "Abbruch des Jobs auf %s angefordert: Er endet in der Fehlerliste als ResqueGo::Cancelled.",
		"Class":                         "Klasse",
		"Clear":                         "Löschen",
		"Clear %s":                      "%s leeren",
		"Clear queue":                   "Warteschlange leeren",
		"Clear this queue…":             "Diese Warteschlange leeren…",
		"Cleared queue %s: %s deleted.": "Warteschlange %s geleert: %s gelöscht.",
		"Cleared unique id %s and released its parked job.":  "Eindeutige ID %s gelöscht und ihren geparkten Job freigegeben.",
		"Cleared unique id %s.":                              "Eindeutige ID %s gelöscht.",
		"Clearing a queue needs the admin role; you are %s.": "Eine Warteschlange zu leeren erfordert die Rolle Administrator; Sie sind %s.",
		"Clearing deletes all %d jobs of queue":              "Leeren löscht alle %d Jobs der Warteschlange",
		"Committed batches waiting for an allocator":         "Abgeschlossene Stapel, die auf einen Zuteiler warten",
		"Conflict":            "Konflikt",
		"Count":               "Anzahl",
		"Cron lines":          "Cron-Zeilen",
		"Cron lines excluded": "Ausgeschlossene Cron-Zeilen",
		"Dates":               "Tage",
		"Dates excluded":      "Ausgeschlossene Tage",
		"Delayed items of %s": "Verzögerte Einträge mit %s",
		"Detail":              "Detail",
		"Due":                 "Fällig",
		"Each entry is acted on once and found by its content; an entry removed or changed by someone else meanwhile is counted as gone, never mistaken for another. Entries that fail after this moment and match the filter are included.": "Jeder Eintrag wird einmal bearbeitet und an seinem Inhalt erkannt; ein Eintrag, den inzwischen jemand anderes entfernt oder geändert hat, zählt als verschwunden und wird nie mit einem anderen verwechselt. Einträge, die nach diesem Moment fehlschlagen und zum Filter passen, sind eingeschlossen.",
		"Enqueued": "Eingereiht",
		"Error":    "Fehler",
		"Every change made through the dashboard, newest first.": "Jede Änderung über das Dashboard, neueste zuerst.",
		"Exception":          "Ausnahme",
		"Exception contains": "Ausnahme enthält",
		"Expires in":         "Läuft ab in",
		"Failed at":          "Fehlgeschlagen um",
		"Filter":             "Filtern",
		"Forbidden":          "Verboten",
		"Gave %d allocation failures another try.": "%d Zuteilungsfehler erneut versucht.",
		"Gave 1 allocation failure another try.":   "1 Zuteilungsfehler erneut versucht.",
		"Group":                                    "Gruppe",
		"Heartbeat":                                "Lebenszeichen",
		"Held by":                                  "Gehalten von",
		"Id":                                       "ID",
		"In":                                       "In",
		"Internal Server Error":                    "Interner Serverfehler",
		"Job":                                      "Job",
		"Jobs left":                                "Verbleibende Jobs",
		"Jobs waiting":                             "Wartende Jobs",
		"Kind":                                     "Art",
		"Last beat":                                "Letztes Lebenszeichen",
		"Last run":                                 "Letzter Lauf",
		"Limit":                                    "Grenze",
		"Mass queues route each source's jobs to pools: a static pool's workers take turns between its sources, a batch pool's units each work through batches. A source's weight is its jobs per turn (in a batch pool, claims of its batch in a row); its limit is how many of its jobs run at once in each pool; a paused source's jobs wait (running ones finish, its active batches are parked off their units).": "Massen-Warteschlangen leiten die Jobs jeder Quelle an Pools: Die Worker eines statischen Pools wechseln sich zwischen dessen Quellen ab, die Einheiten eines Stapel-Pools arbeiten jeweils Stapel ab. Das Gewicht einer Quelle ist die Zahl ihrer Jobs pro Runde (in einem Stapel-Pool: Übernahmen ihres Stapels in Folge); ihre Grenze ist, wie viele ihrer Jobs in jedem Pool gleichzeitig laufen; die Jobs einer pausierten Quelle warten (laufende werden beendet, ihre aktiven Stapel werden von ihren Einheiten geparkt).",
		"Master scheduler:":                 "Master-Scheduler:",
		"Method Not Allowed":                "Methode nicht erlaubt",
		"Misfire":                           "Versäumte Auslösung",
		"Name":                              "Name",
		"Next run":                          "Nächster Lauf",
		"No scheduler is master (lock %s).": "Kein Scheduler ist Master (Sperre %s).",
		"Not Found":                         "Nicht gefunden",
		"Oldest job queued":                 "Ältester Job eingereiht",
		"Parked job":                        "Geparkter Job",
		"Pause":                             "Pausieren",
		"Paused plan %s.":                   "Plan %s pausiert.",
		"Paused queue %s: workers take none of its jobs until it is resumed.": "Warteschlange %s pausiert: Worker nehmen keinen ihrer Jobs, bis sie fortgesetzt wird.",
		"Paused source %s.": "Quelle %s pausiert.",
		"Payload":           "Nutzlast",
		"Plan":              "Plan",
		"Plan %s":           "Plan %s",
		"Plan %s was not paused already; nothing was done.": "Plan %s war nicht pausiert; nichts wurde getan.",
		"Plan %s was paused already; nothing was done.":     "Plan %s war bereits pausiert; nichts wurde getan.",
		"Plans naming it": "Pläne, die ihn nennen",
		"Pool":            "Pool",
		"Problem":         "Problem",
		"Queue %s":        "Warteschlange %s",
		"Queue %s was not paused; nothing was done.": "Warteschlange %s war nicht pausiert; nichts wurde getan.",
		"Reallocate":                              "Neu zuteilen",
		"Reallocate every failure":                "Jeden Fehler neu zuteilen",
		"Reason":                                  "Grund",
		"Release":                                 "Freigeben",
		"Released the lock of serial queue %s.":   "Sperre der seriellen Warteschlange %s freigegeben.",
		"Remove":                                  "Entfernen",
		"Remove %d entries":                       "%d Einträge entfernen",
		"Remove %d items":                         "%d Einträge entfernen",
		"Remove 1 entry":                          "1 Eintrag entfernen",
		"Remove 1 item":                           "1 Eintrag entfernen",
		"Remove all matching…":                    "Alle passenden entfernen…",
		"Remove calendar":                         "Kalender entfernen",
		"Remove failed jobs":                      "Fehlgeschlagene Jobs entfernen",
		"Remove jobs by class and args":           "Jobs nach Klasse und Argumenten entfernen",
		"Remove jobs like this":                   "Solche Jobs entfernen",
		"Remove matching jobs":                    "Passende Jobs entfernen",
		"Removed %s (%s; the preview showed %d).": "%s entfernt (%s; die Vorschau zeigte %d).",
		"Removed %s of class %s from queue %s.":   "%s der Klasse %s aus Warteschlange %s entfernt.",
		"Removed calendar %s.":                    "Kalender %s entfernt.",
		"Removed plan %s.":                        "Plan %s entfernt.",
		"Removed the delayed %s job of queue %s due %s.":            "Den verzögerten %s-Job der Warteschlange %s, fällig %s, entfernt.",
		"Removed the limit of source %s.":                           "Grenze der Quelle %s aufgehoben.",
		"Removing deletes the entries for good.":                    "Entfernen löscht die Einträge endgültig.",
		"Removing deletes the items for good, bucket by bucket, as": "Entfernen löscht die Einträge endgültig, Zeitpunkt für Zeitpunkt, wie es",
		"Request Entity Too Large":                                  "Anfrage zu groß",
		"Resume":                                                    "Fortsetzen",
		"Resumed plan %s.":                                          "Plan %s fortgesetzt.",
		"Resumed queue %s.":                                         "Warteschlange %s fortgesetzt.",
		"Resumed source %s.":                                        "Quelle %s fortgesetzt.",
		"Retry":                                                     "Wiederholen",
		"Retry %d entries":                                          "%d Einträge wiederholen",
		"Retry 1 entry":                                             "1 Eintrag wiederholen",
		"Retry all matching…":                                       "Alle passenden wiederholen…",
		"Retry failed jobs":                                         "Fehlgeschlagene Jobs wiederholen",
		"Retrying puts each job back at the end of its queue and marks its entry as retried, as resque-web's Retry does.": "Wiederholen stellt jeden Job zurück ans Ende seiner Warteschlange und markiert seinen Eintrag als wiederholt, wie es „Retry“ in resque-web tut.",
		"Running since":                 "Läuft seit",
		"Schedules that cannot be used": "Unbrauchbare Zeitpläne",
		"Search the failed list, the delayed queue and the queues by a part of a job's args or id, its class, its queue, or a part of a failed job's exception.": "Durchsuchen Sie die Fehlerliste, die verzögerte Warteschlange und die Warteschlangen nach einem Teil der Argumente oder der ID eines Jobs, seiner Klasse, seiner Warteschlange oder einem Teil der Ausnahme eines fehlgeschlagenen Jobs.",
		"Service Unavailable":                  "Dienst nicht verfügbar",
		"Set limit":                            "Grenze setzen",
		"Set the limit of source %s to %d.":    "Grenze der Quelle %s auf %d gesetzt.",
		"Set the weight of source %s to %d.":   "Gewicht der Quelle %s auf %d gesetzt.",
		"Set weight":                           "Gewicht setzen",
		"Show jobs":                            "Jobs zeigen",
		"Source":                               "Quelle",
		"Source %s was not paused.":            "Quelle %s war nicht pausiert.",
		"Source %s was paused already.":        "Quelle %s war bereits pausiert.",
		"Sources":                              "Quellen",
		"Sources taking turns":                 "Quellen im Wechsel",
		"Sources waiting":                      "Wartende Quellen",
		"Started":                              "Gestartet",
		"State":                                "Zustand",
		"Static jobs waiting":                  "Wartende statische Jobs",
		"Static jobs waiting for an allocator": "Statische Jobs, die auf einen Zuteiler warten",
		"Static pools":                         "Statische Pools",
		"Tag":                                  "Tag",
		"Tag %s":                               "Tag %s",
		"Tags":                                 "Tags",
		"Tags have no index of their own: each page looks at a bounded part of the keyspace, so a page may list few tags or none and still have a next one.": "Tags haben keinen eigenen Index: Jede Seite durchsucht einen begrenzten Teil des Schlüsselraums, daher kann eine Seite wenige oder keine Tags zeigen und trotzdem eine nächste haben.",
		"Target":       "Ziel",
		"The first %d": "Die ersten %d",
		"The first %d matches, shown as they are found (the failed list newest first, the delayed queue soonest first, the queues from the next job). Leaving the page stops the search.": "Die ersten %d Treffer, angezeigt, sobald sie gefunden werden (die Fehlerliste neueste zuerst, die verzögerte Warteschlange früheste zuerst, die Warteschlangen ab dem nächsten Job). Das Verlassen der Seite beendet die Suche.",
		"The schedules a scheduler fires: those the master published and the persistent (dynamic) ones. A schedule file given only to a scheduler is not known here.":                     "Die Zeitpläne, die ein Scheduler auslöst: die vom Master veröffentlichten und die dauerhaften (dynamischen). Eine Zeitplandatei, die nur einem Scheduler übergeben wurde, ist hier nicht bekannt.",
		"This cannot be undone.":                    "Dies kann nicht rückgängig gemacht werden.",
		"This needs the admin role; you are %s.":    "Dies erfordert die Rolle Administrator; Sie sind %s.",
		"This needs the operator role; you are %s.": "Dies erfordert die Rolle Operator; Sie sind %s.",
		"This plan cannot be fired:":                "Dieser Plan kann nicht ausgelöst werden:",
		"Time zone":                                 "Zeitzone",
		"Token":                                     "Token",
		"Type the queue's name to confirm":          "Geben Sie zur Bestätigung den Namen der Warteschlange ein",
		"Uid":                                       "UID",
		"Unauthorized":                              "Nicht angemeldet",
		"Unique id":                                 "Eindeutige ID",
		"Unique id %s had no state; nothing was done.": "Eindeutige ID %s hatte keinen Zustand; nichts wurde getan.",
		"Unique id %s: %s.":                            "Eindeutige ID %s: %s.",
		"Unit":                                         "Einheit",
		"Upcoming slots":                               "Kommende Termine",
		"Weight":                                       "Gewicht",
		"When":                                         "Wann",
		"Where":                                        "Wo",
		"Who":                                          "Wer",
		"action must be retry or remove":               "Aktion muss retry oder remove sein",
		"active":                                       "aktiv",
		"alive":                                        "lebt",
		"at: want the bucket's Unix time":              "at: erwartet die Unix-Zeit des Zeitpunkts",
		"at_unix is required":                          "at_unix ist erforderlich",
		"authentication required":                      "Anmeldung erforderlich",
		"class":                                        "Klasse",
		"cross-origin request refused":                 "Anfrage von fremder Herkunft abgelehnt",
		"dead":                                         "tot",
		"delayed":                                      "verzögert",
		"discarded":                                    "verworfen",
		"does; schedulers go on meanwhile. Items delayed after this moment that match are included.": "tut; Scheduler laufen derweil weiter. Passende Einträge, die nach diesem Moment verzögert werden, sind eingeschlossen.",
		"dropped":                          "fallen gelassen",
		"due":                              "fällig",
		"entries match":                    "Einträge passen zu",
		"entry matches":                    "Eintrag passt zu",
		"env":                              "Umgebung",
		"error":                            "Fehler",
		"every delayed item":               "jeder verzögerte Eintrag",
		"every entry":                      "jeder Eintrag",
		"exception":                        "Ausnahme",
		"exception containing":             "Ausnahme enthält",
		"failed at":                        "fehlgeschlagen um",
		"find":                             "suchen",
		"held":                             "zurückgehalten",
		"id":                               "ID",
		"in %d due times":                  "zu %d Fälligkeitszeitpunkten",
		"in 1 due time":                    "zu 1 Fälligkeitszeitpunkt",
		"index":                            "Index",
		"later →":                          "später →",
		"limit (0: none)":                  "Grenze (0: keine)",
		"lock %s, %s left":                 "Sperre %s, noch %s",
		"more →":                           "weitere →",
		"never":                            "nie",
		"no active batches":                "keine aktiven Stapel",
		"no allocation failures":           "keine Zuteilungsfehler",
		"no batch pools":                   "keine Stapel-Pools",
		"no calendars":                     "keine Kalender",
		"no delayed items on this page":    "keine verzögerten Einträge auf dieser Seite",
		"no entries":                       "keine Einträge",
		"no jobs":                          "keine Jobs",
		"no jobs on this page":             "keine Jobs auf dieser Seite",
		"no plans":                         "keine Pläne",
		"no schedules":                     "keine Zeitpläne",
		"no serial queue is locked":        "keine serielle Warteschlange ist gesperrt",
		"no sources with jobs or settings": "keine Quellen mit Jobs oder Einstellungen",
		"no static pools":                  "keine statischen Pools",
		"no such failed entry: it was retried away, removed or changed meanwhile": "kein solcher fehlgeschlagener Eintrag: Er wurde inzwischen wiederholt, entfernt oder geändert",
		"no such page":                         "keine solche Seite",
		"no tags":                              "keine Tags",
		"no tags in this part of the keyspace": "keine Tags in diesem Teil des Schlüsselraums",
		"no unique ids with a state":           "keine eindeutigen IDs mit einem Zustand",
		"no units":                             "keine Einheiten",
		"none":                                 "keine",
		"not a job":                            "kein Job",
		"not a job:":                           "kein Job:",
		"nothing yet":                          "noch nichts",
		"older →":                              "ältere →",
		"open":                                 "öffnen",
		"open queue":                           "Warteschlange öffnen",
		"or id":                                "oder ID",
		"page":                                 "Seite",
		"parked":                               "geparkt",
		"paused":                               "pausiert",
		"payload":                              "Nutzlast",
		"processed by":                         "verarbeitet von",
		"queue":                                "Warteschlange",
		"queued":                               "eingereiht",
		"range: want 72h, 90d or 2y":           "range: erwartet 72h, 90d oder 2y",
		"retried":                              "wiederholt",
		"retried at":                           "wiederholt um",
		"stale: no worker runs a job of this queue":               "verwaist: kein Worker führt einen Job dieser Warteschlange aus",
		"stop this job: it ends in failed as ResqueGo::Cancelled": "diesen Job anhalten: Er endet in der Fehlerliste als ResqueGo::Cancelled",
		"stopped:":                         "angehalten:",
		"succeeded":                        "erfolgreich",
		"type the queue's name to confirm": "geben Sie zur Bestätigung den Namen der Warteschlange ein",
		"unreadable":                       "unlesbar",
		"unreadable:":                      "unlesbar:",
		"waiting, running or retried":      "wartet, läuft oder wird wiederholt",
		"waits for %d":                     "wartet auf %d",
		"weight":                           "Gewicht",
		"worker":                           "Worker",
		"workers take none of its jobs until it is resumed.": "Worker nehmen keinen ihrer Jobs, bis sie fortgesetzt wird.",
		"← earlier": "← frühere",
		"← first":   "← erste",
		"← newer":   "← neuere",
		"← sooner":  "← frühere",
		// workers page: resque-go processes (process_control.go)
		"resque-go processes":                  "resque-go-Prozesse",
		"Process":                              "Prozess",
		"quiet":                                "ruhend",
		"running":                              "läuft",
		"Quiet":                                "Ruhigstellen",
		"Stop":                                 "Beenden",
		"take jobs again":                      "wieder Jobs annehmen",
		"take no new job; running jobs finish": "keine neuen Jobs annehmen; laufende Jobs werden beendet",
		"Stop process":                         "Prozess beenden",
		"Stopping takes the process out of service: it takes no new job, its running jobs finish, then it exits. A pool child is replaced by a fresh one.": "Beenden nimmt den Prozess außer Betrieb: Er nimmt keine neuen Jobs an, seine laufenden Jobs werden fertig, dann beendet er sich. Ein Pool-Kind wird durch ein neues ersetzt.",
		"Stopping a process needs the operator role.": "Einen Prozess zu beenden erfordert die Operator-Rolle.",
		"Requested quiet of process %s: it takes no new job; its running jobs finish and it stays registered until resumed or stopped.": "Ruhigstellen von Prozess %s angefordert: Er nimmt keine neuen Jobs an; seine laufenden Jobs werden fertig, und er bleibt registriert, bis er fortgesetzt oder beendet wird.",
		"Requested resume of process %s: it takes jobs again.":                                                                          "Fortsetzen von Prozess %s angefordert: Er nimmt wieder Jobs an.",
		"Requested stop of process %s: its running jobs finish, then it exits (a pool child is replaced by a fresh one).":               "Beenden von Prozess %s angefordert: Seine laufenden Jobs werden fertig, dann beendet er sich (ein Pool-Kind wird durch ein neues ersetzt).",
		"a stop is confirmed on its own page first":                                                                                     "ein Beenden wird zuerst auf einer eigenen Seite bestätigt",
		"no process":          "kein Prozess",
		"Back to the workers": "Zurück zu den Workern",
		// the Failed page's selection (selection.go)
		"Select every entry on this page": "Jeden Eintrag dieser Seite auswählen",
		"Select entry %d":                 "Eintrag %d auswählen",
		"Retry selected":                  "Ausgewählte wiederholen",
		"Remove selected":                 "Ausgewählte entfernen",
		"Each ticked entry is found by its content: one retried, removed or changed by someone else since this page was loaded is counted, never mistaken for another.": "Jeder angekreuzte Eintrag wird an seinem Inhalt erkannt: Einer, den seit dem Laden dieser Seite jemand anderes wiederholt, entfernt oder geändert hat, wird gezählt und nie mit einem anderen verwechselt.",
		"No entry was selected: tick the entries to act on.":                                                     "Kein Eintrag ausgewählt: Kreuzen Sie die Einträge an, auf die die Aktion wirken soll.",
		"Retried %s of %d selected; %d no longer there (retried, removed or changed by someone else meanwhile).": "%s von %d ausgewählten wiederholt; %d nicht mehr vorhanden (inzwischen von jemand anderem wiederholt, entfernt oder geändert).",
		"Removed %s of %d selected; %d no longer there (retried, removed or changed by someone else meanwhile).": "%s von %d ausgewählten entfernt; %d nicht mehr vorhanden (inzwischen von jemand anderem wiederholt, entfernt oder geändert).",
		// the pages that read a bounded part of a long list a request
		"Matches among entries %d–%d of %d, oldest first; a page reads at most %d entries.": "Treffer unter den Einträgen %d–%d von %d, älteste zuerst; eine Seite liest höchstens %d Einträge.",
		"Go on from entry %d →": "Weiter ab Eintrag %d →",
		"The end of the list.":  "Das Ende der Liste.",
		"Back to the start":     "Zurück zum Anfang",
		"Matches among %d items of %d due times; a page reads at most %d due times and %d items.": "Treffer unter %d Einträgen von %d Fälligkeitszeiten; eine Seite liest höchstens %d Fälligkeitszeiten und %d Einträge.",
		"Read: due %s to %s.":           "Gelesen: fällig %s bis %s.",
		"Go on from %s →":               "Weiter ab %s →",
		"The end of the delayed queue.": "Das Ende der verzögerten Jobs.",
		"Every plan key, a part of the keyspace a page: this page looked at about %d keys.": "Jeder Plan-Schlüssel, ein Teil des Schlüsselraums je Seite: diese Seite sah etwa %d Schlüssel an.",
		"Go on →":                  "Weiter →",
		"The end of the keyspace.": "Das Ende des Schlüsselraums.",
		"The plans by next run":    "Die Pläne nach nächstem Lauf",
		"Plans by next run, from the schedule: a page reads at most %d slots.": "Pläne nach nächstem Lauf, aus dem Zeitplan: eine Seite liest höchstens %d Termine.",
		"The first page also shows the first %d of %d paused plans.":           "Die erste Seite zeigt auch die ersten %d von %d pausierten Plänen.",
		"The first page also shows the %d paused plans.":                       "Die erste Seite zeigt auch die %d pausierten Pläne.",
		"Later plans →": "Spätere Pläne →",
		"Every plan key, also those on no schedule": "Jeder Plan-Schlüssel, auch ohne Termin",
		"The uids have no index to page through (resque-v3's PHP writers keep none): this page looked at about %d keys of the keyspace.": "Die UIDs haben keinen Index zum Blättern (die PHP-Schreiber von resque-v3 führen keinen): diese Seite sah etwa %d Schlüssel des Schlüsselraums an.",
	}
}

// tf is format in the language of r, filled with args: the words of a
// message the server composes (what an action did).
func (s *server) tf(r *http.Request, format string, args ...any) string {
	return s.cat.format(language(r), format, args...)
}

// count is "1 job" or "3 jobs" in the language of r: one is the text for
// 1, many a format with %d.
func (s *server) count(r *http.Request, n int64, one, many string) string {
	if n == 1 {
		return s.tf(r, one)
	}
	return s.tf(r, many, n)
}
