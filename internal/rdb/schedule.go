package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// KeyTypeError says that Key holds a Type other than the Want a step needs
// (a key written by hand): the step wrote nothing for the entry that needed
// it.
type KeyTypeError struct {
	Key, Type, Want string
}

func (e *KeyTypeError) Error() string {
	return fmt.Sprintf("%s holds a %s, not a %s", e.Key, e.Type, e.Want)
}

// isWrongType reports whether err is Redis's WRONGTYPE reply.
func isWrongType(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.Contains(string(re), "WRONGTYPE")
}

// keyTypeError turns a WRONGTYPE reply about key into a *KeyTypeError (one
// TYPE call, only on that error); any other err is returned as it is.
func (c *Client) keyTypeError(ctx context.Context, err error, key, want string) error {
	if !isWrongType(err) {
		return err
	}
	t, terr := redis.String(c.do(ctx, "TYPE", key))
	if terr != nil || t == want || t == "none" {
		return err // changed since: the caller reads again
	}
	return &KeyTypeError{Key: key, Type: t, Want: want}
}

// ScheduleMember is one member of a schedule zset (delayed_queue_schedule,
// plan_schedule). A good member is a Unix time in seconds written as
// resque-scheduler and the PHP scheduler write it (decimal digits, no sign,
// no leading zero): TS is that time. Any other member is Bad: it names no
// list a mover or planner can find.
type ScheduleMember struct {
	Member string
	Score  float64
	TS     int64
	Bad    bool
}

// parseScheduleMember reads member m.
func parseScheduleMember(m string, score float64) ScheduleMember {
	ts, err := strconv.ParseInt(m, 10, 64)
	bad := err != nil || strconv.FormatInt(ts, 10) != m
	return ScheduleMember{Member: m, Score: score, TS: ts, Bad: bad}
}

// scheduleMembers returns up to limit members of schedule key with scores
// from min to max (zset bounds, as strings), lowest first (limit 0: all).
func (c *Client) scheduleMembers(ctx context.Context, key, min, max string, limit int) ([]ScheduleMember, error) {
	args := []any{key, min, max, "WITHSCORES"}
	if limit > 0 {
		args = append(args, "LIMIT", 0, limit)
	}
	v, err := redis.Strings(c.do(ctx, "ZRANGEBYSCORE", args...))
	if err != nil {
		return nil, err
	}
	out := make([]ScheduleMember, 0, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		score, err := strconv.ParseFloat(v[i+1], 64)
		if err != nil {
			return nil, fmt.Errorf("score %q of %q: %w", v[i+1], v[i], err)
		}
		out = append(out, parseScheduleMember(v[i], score))
	}
	return out, nil
}

// scheduleSetAsideScript takes an unusable member off a schedule (see the
// script).
var scheduleSetAsideScript = loadScript("schedule_set_aside.lua", -1)

// setAside runs schedule_set_aside.lua: member leaves schedule, with entry
// recorded in failed ("" records nothing); with list, only while list
// still holds a listType.
func (c *Client) setAside(ctx context.Context, schedule, member, list, listType string, entry []byte) (bool, error) {
	args := []any{2, schedule, c.keys.Failed(), member, entry}
	if list != "" {
		args = []any{3, schedule, c.keys.Failed(), list, member, entry, listType}
	}
	n, err := redis.Int(c.eval(ctx, scheduleSetAsideScript, args...))
	if err != nil {
		return false, fmt.Errorf("rdb: set aside %q of %s: %w", member, schedule, err)
	}
	return n == 1, nil
}
