package protocol

import (
	"regexp"
	"strconv"
)

// Runtimes a worker id can belong to, as GuessRuntime names them.
const (
	RuntimeResqueGo = "resque-go"
	RuntimeRuby     = "ruby"
	RuntimePHP      = "php"
	RuntimeNode     = "node"
)

var (
	// Ruby's Time#to_s: "2026-11-21 21:23:41 +0000" (resque 2.x and 3.x)
	rubyStarted = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{4}$`)
	// PHP's date('c') (php-resque 1.3 and master) and strftime('%a %b %d
	// %H:%M:%S %Z %Y') (chrisboulton/php-resque)
	phpStarted = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} [A-Z]+ \d{4})$`)
)

// GuessRuntime names the runtime that registered a worker, from what it
// wrote: resque-go's ids carry a slot (host:pid-slot:queues); the others
// differ in the form of worker:<id>:started (the captured fixtures of each):
// node-resque writes Unix seconds, Ruby Resque Time#to_s, php-resque
// date('c') or strftime's "%a %b %d ..." form. "" when it cannot tell.
func GuessRuntime(id WorkerID, started string) string {
	switch {
	case id.Slot > 0:
		return RuntimeResqueGo
	case started == "":
		return ""
	case rubyStarted.MatchString(started):
		return RuntimeRuby
	case phpStarted.MatchString(started):
		return RuntimePHP
	}
	if _, err := strconv.ParseInt(started, 10, 64); err == nil {
		return RuntimeNode
	}
	return ""
}
