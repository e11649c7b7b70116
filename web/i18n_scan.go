package web

// messagesScanDE is the German of the words of the pages that read a
// bounded piece of a long list per request (failed and delayed with a
// filter, plans, unique ids).
func messagesScanDE() map[string]string {
	return map[string]string{
		"Matches among entries":              "Treffer unter den Einträgen",
		"of":                                 "von",
		"oldest first; a page reads at most": "älteste zuerst; eine Seite liest höchstens",
		"entries.":                           "Einträge.",
		"Go on from entry":                   "Weiter ab Eintrag",
		"The end of the list.":               "Das Ende der Liste.",
		"Back to the start":                  "Zurück zum Anfang",
		"Matches among":                      "Treffer unter",
		"items of":                           "Einträgen von",
		"due times":                          "Fälligkeitszeiten",
		"a page reads at most":               "eine Seite liest höchstens",
		"due times and":                      "Fälligkeitszeiten und",
		"items.":                             "Einträge.",
		"Go on from":                         "Weiter ab",
		"The end of the delayed queue.":      "Das Ende der verzögerten Jobs.",
		"Every plan key, a part of the keyspace a page: this page looked at about": "Jeder Plan-Schlüssel, ein Teil des Schlüsselraums je Seite: diese Seite sah etwa",
		"keys.":                    "Schlüssel an.",
		"Go on":                    "Weiter",
		"The end of the keyspace.": "Das Ende des Schlüsselraums.",
		"The plans by next run":    "Die Pläne nach nächstem Lauf",
		"Plans by next run, from the schedule: a page reads at most": "Pläne nach nächstem Lauf, aus dem Zeitplan: eine Seite liest höchstens",
		"slots":                      "Termine",
		"and shows the paused plans": "und zeigt die pausierten Pläne",
		"the first":                  "die ersten",
		"Later plans":                "Spätere Pläne",
		"Every plan key, also those on no schedule":                                                             "Jeder Plan-Schlüssel, auch ohne Termin",
		"The uids have no index to page through (resque-v3's PHP writers keep none): this page looked at about": "Die UIDs haben keinen Index zum Blättern (die PHP-Schreiber von resque-v3 führen keinen): diese Seite sah etwa",
		"keys of the keyspace.": "Schlüssel des Schlüsselraums an.",
	}
}
