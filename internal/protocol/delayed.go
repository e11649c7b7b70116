package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// DelayedSchedule is resque-scheduler's zset of due timestamps.
func (k Keys) DelayedSchedule() string { return k.key("delayed_queue_schedule") }

// MoverLease is resque-go's lease on promoting due delayed items: one
// elected mover polls the schedule, the others only try for the lease.
func (k Keys) MoverLease() string { return k.key("resque-go", "mover_lease") }

// Delayed is the list of items due at ts (Unix seconds).
func (k Keys) Delayed(ts int64) string { return k.key("delayed", strconv.FormatInt(ts, 10)) }

// DelayedMember is what timestamps:<item> sets hold: delayed:<ts> with no
// namespace, as resque-scheduler writes it.
func DelayedMember(ts int64) string { return "delayed:" + strconv.FormatInt(ts, 10) }

// Timestamps is the reverse index of an item: the buckets it is in.
func (k Keys) Timestamps(item []byte) string { return k.key("timestamps", string(item)) }

// DelayedItem turns a payload into a resque-scheduler delayed item: class,
// args, queue first (Ruby's order), then the payload's other fields.
func DelayedItem(payload []byte, queue string) ([]byte, error) {
	members, err := objectMembers(payload)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	emit := func(name string, v []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(MarshalString(name))
		b.WriteByte(':')
		b.Write(v)
	}
	for _, want := range []string{"class", "args"} {
		for _, m := range members {
			if m.name == want {
				emit(m.name, m.value)
			}
		}
	}
	emit("queue", MarshalString(queue))
	for _, m := range members {
		if m.name != "class" && m.name != "args" && m.name != "queue" {
			emit(m.name, m.value)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// PromotedPayload is the payload a delayed item becomes when it is due.
// An item with no fields but class, args and queue (what resque-scheduler
// writes, and what resque-go writes for a Ruby-shaped job) is promoted as
// resque-scheduler does: {"class","args"}, nothing added. Any other item is
// a job with fields of its own (resque-v3, php-resque): every field is kept,
// queue included (resque-v3 reads it for retries and reports), with a fresh
// queue_time and an id when it had none.
//
// An item with no queue but a sourceId or a name is a mass-queue job: the
// resqu-client v4 producer's enqueueDelayed writes its job that way
// ({"class","args","sourceId","name",...}, no id, no queue), and the v4
// server routes it, when due, through unassigned. It is promoted with an
// id and a queue_time, as the producer's enqueue writes a job to
// unassigned, and queue is "": the caller pushes it to unassigned.
func PromotedPayload(item []byte, now time.Time) (payload []byte, queue string, err error) {
	members, err := objectMembers(item)
	if err != nil {
		return nil, "", err
	}
	hasID, hasQueue, rubyShaped, mass := false, false, true, false
	for _, m := range members {
		switch m.name {
		case "queue":
			hasQueue = true
			if err := json.Unmarshal(m.value, &queue); err != nil {
				return nil, "", fmt.Errorf("%w: delayed item \"queue\" is not a string", ErrBadPayload)
			}
		case "id":
			hasID = true
		case "sourceId", "name":
			mass = true
		}
		if m.name != "class" && m.name != "args" && m.name != "queue" {
			rubyShaped = false
		}
	}
	if queue == "" && (hasQueue || !mass) {
		return nil, "", fmt.Errorf("%w: delayed item has no queue", ErrBadPayload)
	}
	if rubyShaped {
		out, err := WithoutField(item, "queue")
		return out, queue, err
	}
	set := [][2]string{{"queue_time", FormatQueueTime(now)}}
	if !hasID {
		set = [][2]string{{"id", string(MarshalString(NewJobID()))}, set[0]}
	}
	out, err := WithFields(item, set...)
	return out, queue, err
}

// IsMassJob reports whether payload is a mass-queue (v4) job that names no
// queue of its own: an object with a sourceId or a name and no queue field.
// Such a job is routed through unassigned (delayed promotion, a retry from
// failed).
func IsMassJob(payload []byte) bool {
	members, err := objectMembers(payload)
	if err != nil {
		return false
	}
	mass := false
	for _, m := range members {
		switch m.name {
		case "queue":
			return false
		case "sourceId", "name":
			mass = true
		}
	}
	return mass
}

// WithJobID returns payload with an id and a queue_time when it has no id
// (a job a producer filed without one, such as resqu-client's delayed
// job), else payload unchanged.
func WithJobID(payload []byte, now time.Time) ([]byte, error) {
	members, err := objectMembers(payload)
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		if m.name == "id" {
			return payload, nil
		}
	}
	return WithFields(payload, [2]string{"id", string(MarshalString(NewJobID()))}, [2]string{"queue_time", FormatQueueTime(now)})
}

// objectMembers returns the top-level members of a JSON object in order,
// each value as its raw bytes.
func objectMembers(raw []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: not a JSON object", ErrBadPayload)
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
		}
		out = append(out, field{tok.(string), value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the object", ErrBadPayload)
	}
	return out, nil
}
