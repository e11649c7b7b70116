// Package doccheck holds what the documentation tests check in text a user
// reads (README.md, CHANGELOG.md, docs/*.md, what the commands print): it
// must speak of the product, the hardware and commands anyone can run, not
// of how the project's own work was organised, which a user cannot see.
package doccheck

import (
	"regexp"
	"strings"
)

// processWords match phrases that narrate the project's own work instead of
// the product: its issue tracker, the machines its measurements happened to
// run on, the steps of its development. Each is written so that ordinary
// uses ("a session of redis-cli", "an issue with the network") do not match.
var processWords = regexp.MustCompile(strings.Join([]string{
	`(?i:\bthis task\b)`,
	`(?i:\bworkplace\b)`,
	`(?i:\bwas lent\b)`,
	`(?i:\blent (?:machine|device|16-core))`,
	`(?i:\bno device\b)`,
	`\bstops? [0-9]+\b`, // "stop 22"; not "kill -STOP 1234"
	`(?i:\bthe issue\b)`,
	`(?i:\bissues? #?[0-9]+\b)`,
	`(?i:\bthis VM\b)`,
	`(?i:\b(?:this|the|one) session\b)`,
	`(?i:\bhelpers? (?:branch|worktree|session)\b)`,
	`(?i:\bborrowed machine\b)`,
	`(?i:\bmodule proxy\b)`,
	`(?i:\bdevelopment (?:VM|machine)\b)`,
}, "|"))

// keywords has a word of each of processWords' phrases, so that a line
// without any is passed over without running the expression.
var keywords = []string{"task", "workplace", "lent", "device", "stop", "issue", "vm", "session", "helper",
	"borrowed", "proxy", "development"}

// ProcessWords returns each phrase of text that narrates the project's own
// work, in the order they appear.
func ProcessWords(text string) []string {
	lower := strings.ToLower(text)
	for _, k := range keywords {
		if strings.Contains(lower, k) {
			return processWords.FindAllString(text, -1)
		}
	}
	return nil
}
