package service

import (
	"sync"
	"time"
)

// OnceIn limits how often one thing is reported: a loop that meets the same
// stuck entry every pass logs it once per interval, not once per pass. The
// zero value reports every key once a minute. Safe for concurrent use.
type OnceIn struct {
	// Interval between two reports of one key; default 1 minute.
	Interval time.Duration

	mu   sync.Mutex
	last map[string]time.Time
}

// Due reports whether key was not reported in the last Interval (as of
// now), and if so records now as its report.
func (o *OnceIn) Due(key string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	iv := o.Interval
	if iv <= 0 {
		iv = time.Minute
	}
	if t, ok := o.last[key]; ok && now.Sub(t) < iv && now.Sub(t) >= 0 {
		return false
	}
	if o.last == nil {
		o.last = map[string]time.Time{}
	}
	for k, t := range o.last { // forget what is no longer reported
		if now.Sub(t) >= iv {
			delete(o.last, k)
		}
	}
	o.last[key] = now
	return true
}
