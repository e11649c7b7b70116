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
	}
}
