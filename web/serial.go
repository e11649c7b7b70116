package web

import (
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"github.com/resque-go/resque-go/client"
)

// The Serial locks page: the held locks of serial queues, with the worker
// running a job of each, and a release for a stale one.

type serialLockView struct {
	Queue string `json:"queue"`
	Token string `json:"token"`
	// TokenHex is the token's bytes in hex: a release gives it (or
	// token) to name a token that is not valid UTF-8.
	TokenHex string `json:"token_hex"`
	// TTLSeconds is the time the lock has left; null without an expiry.
	TTLSeconds *float64           `json:"ttl_seconds"`
	Holders    []serialHolderView `json:"holders"`
	// Stale: no registered worker runs a job of the queue.
	Stale   bool   `json:"stale"`
	Problem string `json:"problem,omitempty"`
	// Expires is the time left as the page shows it.
	Expires string `json:"-"`
}

type serialHolderView struct {
	Worker       string     `json:"worker"`
	Class        string     `json:"class"`
	Since        *time.Time `json:"since"`
	SinceSeconds *int64     `json:"since_seconds"`
}

func newSerialLockView(now time.Time, l client.SerialLock) serialLockView {
	v := serialLockView{Queue: clean(l.Queue), Token: clean(l.Token), TokenHex: hex.EncodeToString([]byte(l.Token)), Holders: []serialHolderView{},
		Stale: len(l.Holders) == 0 && l.Problem == "", Problem: clean(l.Problem)}
	if l.TTL >= 0 && l.Problem == "" {
		s := l.TTL.Seconds()
		v.TTLSeconds, v.Expires = &s, humanSeconds(int64(s+0.999))
	}
	for _, h := range l.Holders {
		v.Holders = append(v.Holders, serialHolderView{Worker: clean(h.Worker), Class: clean(h.Class),
			Since: timePtr(h.Since), SinceSeconds: agePtr(now, h.Since)})
	}
	return v
}

func (s *server) serialLocks(r *http.Request) ([]serialLockView, error) {
	ls, err := s.c.SerialLocks(r.Context())
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]serialLockView, len(ls))
	for i, l := range ls {
		out[i] = newSerialLockView(now, l)
	}
	return out, nil
}

// releaseSerialLock releases queue's lock while token (or the token
// whose bytes are tokenHex in hex) holds it.
func (s *server) releaseSerialLock(r *http.Request, queue, token, tokenHex string) error {
	if tokenHex != "" {
		b, err := hex.DecodeString(tokenHex)
		if err != nil {
			return statusErr(http.StatusBadRequest, "token_hex: want hex digits")
		}
		token = string(b)
	}
	if queue == "" || token == "" {
		return statusErr(http.StatusBadRequest, "a queue and the lock's token are required")
	}
	err := s.c.ReleaseSerialLock(r.Context(), queue, token)
	switch {
	case errors.Is(err, client.ErrLockChanged):
		return statusErr(http.StatusConflict, "the lock of queue %s was released, expired or taken again meanwhile; nothing was done", clip(queue, 200))
	case errors.Is(err, client.ErrInvalid):
		return statusErr(http.StatusConflict, "the lock of queue %s cannot be released here: its key holds another type", clip(queue, 200))
	case err != nil:
		return err
	}
	return s.audit(r, "serial.release", "serial lock of queue "+queue, 1, "token "+clip(token, 80))
}

func (s *server) serialPage(w http.ResponseWriter, r *http.Request) {
	ls, err := s.serialLocks(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "serial", "Serial locks", "serial", ls)
}

func (s *server) serialReleaseForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleAdmin) {
		return
	}
	q := r.Form.Get("queue")
	if err := s.releaseSerialLock(r, q, r.Form.Get("token"), r.Form.Get("token_hex")); err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "serial", s.tf(r, "Released the lock of serial queue %s.", q))
}

func (s *server) apiSerial(w http.ResponseWriter, r *http.Request) {
	ls, err := s.serialLocks(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"locks": ls})
}

func (s *server) apiSerialRelease(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleAdmin) {
		return
	}
	var body struct {
		Token    string `json:"token"`
		TokenHex string `json:"token_hex"`
	}
	if err := jsonBody(w, r, &body); err != nil {
		s.failErr(w, r, err)
		return
	}
	q := r.PathValue("queue")
	if err := s.releaseSerialLock(r, q, body.Token, body.TokenHex); err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"queue": clean(q), "released": true})
}
