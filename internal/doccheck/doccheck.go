// Package doccheck holds what the documentation tests check in text a user
// reads (README.md, CHANGELOG.md, docs/*.md, what the commands print): it
// must speak of the product, the hardware and commands anyone can run, not
// of how the project's own work was organised, which a user cannot see.
package doccheck

import "regexp"

// processWords match phrases that narrate the project's own work instead of
// the product: its issue tracker, the machines its measurements happened to
// run on, the steps of its development. Each is written so that ordinary
// uses ("a session of redis-cli", "an issue with the network") do not match.
var processWords = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bthis task\b`),
	regexp.MustCompile(`(?i)\bworkplace\b`),
	regexp.MustCompile(`(?i)\bwas lent\b`),
	regexp.MustCompile(`(?i)\blent (?:machine|device|16-core)`),
	regexp.MustCompile(`(?i)\bno device\b`),
	regexp.MustCompile(`\bstops? [0-9]+\b`),
	regexp.MustCompile(`(?i)\bthe issue\b`),
	regexp.MustCompile(`(?i)\bissues? #?[0-9]+\b`),
	regexp.MustCompile(`(?i)\bthis VM\b`),
	regexp.MustCompile(`(?i)\b(?:this|the|one) session\b`),
	regexp.MustCompile(`(?i)\bhelpers? (?:branch|worktree|session)\b`),
	regexp.MustCompile(`(?i)\bborrowed machine\b`),
	regexp.MustCompile(`(?i)\bmodule proxy\b`),
	regexp.MustCompile(`(?i)\bdevelopment (?:VM|machine)\b`),
}

// ProcessWords returns each phrase of text that narrates the project's own
// work, in order.
func ProcessWords(text string) []string {
	var out []string
	for _, re := range processWords {
		out = append(out, re.FindAllString(text, -1)...)
	}
	return out
}
