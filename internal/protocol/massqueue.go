package protocol

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Mass queues (docs/protocol.md#mass-queues): keys producers write (the released layout of
// the PHP producer resqu-client) and keys only servers touch (resque-go's).
// Values stored inside keys (list items, hash fields, zset members) never
// carry the namespace.

// Unassigned is the list of static payloads waiting to be routed: producers
// LPUSH, allocators pop from the tail.
func (k Keys) Unassigned() string { return k.key("unassigned") }

// Uncommitted is the list a producer builds a batch in: created by a script
// that fails when the key exists, then LPUSHX, EXPIRE after every push.
func (k Keys) Uncommitted(batchID string) string { return k.key("uncommitted", batchID) }

// BatchCreated marks a batch id `mass batch create` handed out, until its
// first push creates Uncommitted (resque-go's own; a string with the
// batch's time to live): a later push to an id whose list is gone is
// refused instead of starting the batch again.
func (k Keys) BatchCreated(batchID string) string {
	return k.key("resque-go", "batch_created", batchID)
}

// CommittedList is the list of committed batch ids waiting for a unit:
// producers LPUSH on commit, allocators pop from the tail.
func (k Keys) CommittedList() string { return k.key("committed") }

// Committed is a committed batch's payloads (renamed from Uncommitted);
// workers take from the tail, so jobs run in the producer's order.
func (k Keys) Committed(batchID string) string { return k.key("committed", batchID) }

// CommittedPrefix is "committed:": a batch's list without the namespace is
// CommittedPrefix + id (worker records and claim scripts name it so).
const CommittedPrefix = "committed:"

// SourceRoute is an operator's override of the pool for a source's job name
// (or "default" for every name of the source): src:<s>:cfg:<j>.
func (k Keys) SourceRoute(source, job string) string { return k.key("src", source, "cfg", job) }

// SourceRoutePattern matches every override (SCAN MATCH).
func (k Keys) SourceRoutePattern() string { return k.key("src", "*", "cfg", "*") }

// ParseSourceRoute splits an override key into source and job name.
func (k Keys) ParseSourceRoute(key string) (source, job string, ok bool) {
	rest, ok := strings.CutPrefix(key, k.key("src", ""))
	if !ok {
		return "", "", false
	}
	source, job, ok = strings.Cut(rest, ":cfg:")
	if !ok || source == "" || job == "" || strings.Contains(source, ":") {
		return "", "", false
	}
	return source, job, true
}

// RoutePrefix is "<ns>:src:", from which the allocation scripts build the
// override keys of a payload they have just popped.
func (k Keys) RoutePrefix() string { return k.key("src", "") }

// StaticQueue is the released server's FIFO of a static pool. resque-go
// does not push there (it keeps one FIFO per source, StaticSourceQueue);
// it is the queue name a static pool's jobs report (worker records, failed
// entries, statistics).
func (k Keys) StaticQueue(pool string) string { return k.key(StaticQueueName(pool)) }

// StaticQueueName is StaticQueue without the namespace.
func StaticQueueName(pool string) string { return "static:queue:" + pool }

// IsMassQueueName reports whether a job's queue (as its worker record and
// failed entry name it) is a mass-queue list: a static pool's or a batch's
// (committed:<id>). Such a job goes back through unassigned when retried by
// hand.
func IsMassQueueName(q string) bool {
	return strings.HasPrefix(q, "static:queue:") || strings.HasPrefix(q, CommittedPrefix)
}

// StaticSourceQueue is resque-go's FIFO of one source's static jobs in a
// pool: static:queue:<pool>:<source>.
func (k Keys) StaticSourceQueue(pool, source string) string {
	return k.key(StaticSourcePrefix(pool) + source)
}

// StaticSourcePrefix is StaticSourceQueue without namespace and source.
func StaticSourcePrefix(pool string) string { return "static:queue:" + pool + ":" }

// StaticRing is the ring of a static pool's sources with work (list of
// source ids): claims serve its head and rotate it. An entry is a source
// id, or an inline entry (StaticInline) holding the source's next job.
func (k Keys) StaticRing(pool string) string { return k.key("static", "ring", pool) }

// StaticInline is the ring entry the allocator writes for a source that
// joins the ring while its FIFO is empty: "<source>:<payload>", the job
// held in the entry instead of a FIFO made for it and deleted by its claim
// (a source id has no ':'). The entry's job comes before any in the FIFO.
func StaticInline(source, payload string) string { return source + ":" + payload }

// ParseStaticEntry splits a ring entry into its source and, for an inline
// entry, its job (inline false: a source id alone).
func ParseStaticEntry(e string) (source, payload string, inline bool) {
	return strings.Cut(e, ":")
}

// StaticParked lists a static pool's sources that are at their concurrency
// limit; claims look at one per claim and put it back on the ring when a
// slot is free.
func (k Keys) StaticParked(pool string) string { return k.key("static", "parked", pool) }

// StaticState is a static pool's ring bookkeeping (hash): m:<source> is
// "r" (on the ring) or "p" (parked), absent when the source is neither;
// t:<source> counts the jobs served in the source's current turn.
func (k Keys) StaticState(pool string) string { return k.key("static", "state", pool) }

// StaticHolders is the hash worker id -> claim sequence of the workers that
// claimed a job of source in pool. An entry counts only while that worker's
// claim sequence (ClaimSeqs) still equals it: a finish, a requeue and a
// dead-worker recovery all move or drop the sequence, so no holder can leak
// a concurrency slot.
func (k Keys) StaticHolders(pool, source string) string {
	return k.key("static", "holders", pool, source)
}

// StaticHoldersPrefix is StaticHolders(pool, "") for the claim script.
func (k Keys) StaticHoldersPrefix(pool string) string { return k.key("static", "holders", pool, "") }

// StaticPools is the zset static pool -> last beat (Unix ms) of the pool
// managers serving it (StaticPoolBeat): allocators route to a pool their
// config lacks while it beat recently.
func (k Keys) StaticPools() string { return k.key("static", "pools") }

// MassSettings is the hash of per-source settings of static pools:
// <source>:weight (default 1), <source>:limit (concurrent jobs per pool,
// absent: none), <source>:paused ("1").
func (k Keys) MassSettings() string { return k.key("static", "settings") }

// BatchHolders is StaticHolders for a committed batch: a batch is finished
// only when its list is empty and no entry is current.
func (k Keys) BatchHolders(batchID string) string { return k.key("batch", "holders", batchID) }

// BatchHoldersPrefix is BatchHolders("").
func (k Keys) BatchHoldersPrefix() string { return k.key("batch", "holders", "") }

// PoolSources is the hash source -> unit id holding the source's active
// batch in a batch pool (one per source per pool): pool:<pool>.
func (k Keys) PoolSources(pool string) string { return k.key("pool", pool) }

// PoolUnitQueues is the load index of a batch pool's units (zset:
// UnitQueuesMember -> batch count).
func (k Keys) PoolUnitQueues(pool string) string { return k.key("pool", pool, "unit_queues") }

// UnitQueues is the list of batch ids assigned to a unit, rotated by its
// workers: pool:<pool>:<unit>:queues.
func (k Keys) UnitQueues(pool, unit string) string { return k.key(UnitQueuesMember(pool, unit)) }

// UnitQueuesMember is UnitQueues without the namespace: the member of
// PoolUnitQueues, as the released server writes it.
func UnitQueuesMember(pool, unit string) string { return "pool:" + pool + ":" + unit + ":queues" }

// ParseUnitQueuesMember returns the unit id of a PoolUnitQueues member.
func ParseUnitQueuesMember(pool, member string) (string, bool) {
	rest, ok := strings.CutPrefix(member, "pool:"+pool+":")
	if !ok {
		return "", false
	}
	unit, ok := strings.CutSuffix(rest, ":queues")
	return unit, ok && unit != ""
}

// Backlog is the list of a source's batches waiting while another of its
// batches is active in the pool (LPUSH; the oldest is at the tail).
func (k Keys) Backlog(pool, source string) string { return k.key("pool", pool, "backlog", source) }

// BacklogPrefix is Backlog(pool, "").
func (k Keys) BacklogPrefix(pool string) string { return k.key("pool", pool, "backlog", "") }

// UnitHeartbeats is resque-go's zset unit id -> last heartbeat (Unix
// milliseconds) of a batch pool's units.
func (k Keys) UnitHeartbeats(pool string) string { return k.key("pool", pool, "heartbeats") }

// AllocationFailures lists what could not be placed: batch ids (as the
// released server writes them) and, resque-go's, static payloads. The entry
// is kept as is so it can be re-allocated; why is in AllocationReasons.
func (k Keys) AllocationFailures() string { return k.key("batch", "allocation_failures") }

// AllocationReasons is the hash SHA-1 of an allocation failure entry ->
// JSON {"reason":..., "at":<unix>}.
func (k Keys) AllocationReasons() string { return k.key("batch", "allocation_reasons") }

// MassQuarantine holds static payloads an allocator found unusable (no
// class, sourceId or name, not JSON) until they are recorded in failed: a
// list any live allocator drains, so none is lost with its process.
func (k Keys) MassQuarantine() string { return k.key("resque-go", "mass", "quarantine") }

// SHA1Hex is the lowercase hex SHA-1 of b, as Lua's redis.sha1hex writes it
// (allocation reasons are keyed by it).
func SHA1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// ErrBadSourceID is wrapped by the errors about unusable source ids.
var ErrBadSourceID = errors.New("bad source id")

// CheckSourceID reports whether s can be a source id: non-empty, no ":"
// (batch ids and keys are ":"-separated), no whitespace or control
// characters.
func CheckSourceID(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty", ErrBadSourceID)
	}
	if strings.Contains(s, ":") {
		return fmt.Errorf("%w %q: contains ':'", ErrBadSourceID, s)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("%w %q: contains whitespace or control characters", ErrBadSourceID, s)
	}
	return nil
}

// CheckJobName reports whether name can be a mass job name: non-empty.
func CheckJobName(name string) error {
	if name == "" {
		return errors.New("job name is empty")
	}
	return nil
}

// CheckBatchName is CheckJobName for a batch's job name, which is also the
// second part of the batch id: no ":" either.
func CheckBatchName(name string) error {
	if err := CheckJobName(name); err != nil {
		return err
	}
	if strings.Contains(name, ":") {
		return fmt.Errorf("batch job name %q contains ':'", name)
	}
	return nil
}

// CheckPoolName reports whether name can be a pool name: non-empty, no
// ":" (pool keys are ":"-separated), no whitespace.
func CheckPoolName(name string) error {
	if name == "" {
		return errors.New("pool name is empty")
	}
	if strings.ContainsAny(name, ": \t\r\n") {
		return fmt.Errorf("pool name %q contains ':' or whitespace", name)
	}
	return nil
}

// NewBatchID returns <source>:<name>:<8 hex>, as resqu-client names batches.
func NewBatchID(source, name string) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("protocol: crypto/rand failed: %v", err))
	}
	return source + ":" + name + ":" + hex.EncodeToString(b[:])
}

// ParseBatchID splits a batch id into source, name and suffix (the
// released server splits on the first two ':').
func ParseBatchID(id string) (source, name, suffix string, err error) {
	parts := strings.SplitN(id, ":", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", fmt.Errorf("batch id %q is not <sourceId>:<name>:<suffix>", id)
	}
	return parts[0], parts[1], parts[2], nil
}

// MassJob is a job for the mass-queue layout.
type MassJob struct {
	Class    string
	SourceID string
	Name     string
	// Args is JSON (an object or array; other values are wrapped in an
	// array). Empty, [] and {} are left out, as resqu-client's
	// array_filter leaves them out.
	Args   []byte
	Unique Unique
	// FailCount > 0 adds "failCount".
	FailCount int
	// ID defaults to a new 32-hex id; Now (the queue_time) to time.Now.
	ID  string
	Now time.Time
}

// NewMassPayload writes a mass-queue payload with resqu-client's key
// order: class, sourceId, name, args, unique, failCount, id, queue_time;
// empty fields are left out. resqu-client's json_encode escapes "/" and
// non-ASCII characters; resque-go writes them as they are (both parse the
// same).
func NewMassPayload(j MassJob) ([]byte, error) {
	if j.Class == "" {
		return nil, errors.New("protocol: class must not be empty")
	}
	if err := CheckSourceID(j.SourceID); err != nil {
		return nil, fmt.Errorf("protocol: %w", err)
	}
	if err := CheckJobName(j.Name); err != nil {
		return nil, fmt.Errorf("protocol: %w", err)
	}
	if err := checkUnique(j.Unique); err != nil {
		return nil, err
	}
	var args []byte
	if len(bytes.TrimSpace(j.Args)) > 0 {
		a, err := normalizeArgs(j.Args)
		if err != nil {
			return nil, err
		}
		if string(a) != "[]" && string(a) != "{}" {
			args = a
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"class":`)
	b.Write(MarshalString(j.Class))
	b.WriteString(`,"sourceId":`)
	b.Write(MarshalString(j.SourceID))
	b.WriteString(`,"name":`)
	b.Write(MarshalString(j.Name))
	if args != nil {
		b.WriteString(`,"args":`)
		b.Write(args)
	}
	if u := j.Unique; u.UID != "" {
		b.WriteString(`,"unique":{"uid":`)
		b.Write(MarshalString(u.UID))
		if u.Deferrable {
			b.WriteString(`,"deferrableBy":`)
			b.WriteString(strconv.FormatInt(u.DeferrableBy, 10))
		}
		b.WriteByte('}')
	}
	if j.FailCount > 0 {
		b.WriteString(`,"failCount":`)
		b.WriteString(strconv.Itoa(j.FailCount))
	}
	id := j.ID
	if id == "" {
		id = NewJobID()
	}
	now := j.Now
	if now.IsZero() {
		now = time.Now()
	}
	b.WriteString(`,"id":`)
	b.Write(MarshalString(id))
	b.WriteString(`,"queue_time":`)
	b.WriteString(FormatQueueTime(now))
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MassView is what routing needs from a mass payload.
type MassView struct {
	Class, SourceID, Name string
}

// DecodeMassPayload decodes raw and checks the fields routing needs:
// class, sourceId and name present (strings, or integers for sourceId and
// name, which PHP producers may write), and a sourceId without ':'. The
// error wraps ErrBadPayload and names everything that is missing.
func DecodeMassPayload(raw []byte) (MassView, error) {
	p, err := DecodePayload(raw)
	if err != nil && p.Fields == nil {
		return MassView{}, err
	}
	var missing []string
	v := MassView{Class: p.Class, SourceID: massField(p.Fields["sourceId"]), Name: massField(p.Fields["name"])}
	if v.Class == "" {
		missing = append(missing, "class")
	}
	if v.SourceID == "" {
		missing = append(missing, "sourceId")
	}
	if v.Name == "" {
		missing = append(missing, "name")
	}
	if len(missing) > 0 {
		return v, fmt.Errorf("%w: mass payload is missing %s: %s", ErrBadPayload, strings.Join(missing, ", "), excerpt(raw))
	}
	if err != nil {
		return v, err
	}
	if strings.Contains(v.SourceID, ":") {
		return v, fmt.Errorf("%w: mass payload sourceId %q contains ':': %s", ErrBadPayload, v.SourceID, excerpt(raw))
	}
	return v, nil
}

// massField reads a string field, or an integer written as a number.
func massField(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return string(raw)
	}
	return ""
}

// BatchUIDs is the uids of the unique jobs pushed to an uncommitted batch
// (resque-go's own; a zset uid -> when that uid's queued state expires,
// Unix seconds, living as long as those states): pushes keep the states
// alive while the batch is, and the commit makes them permanent.
func (k Keys) BatchUIDs(batchID string) string {
	return k.key("resque-go", "batch_uids", batchID)
}

// BatchPaused is resque-go's hash source -> batch id of the batches parked
// in a batch pool while their source is paused (`mass pause`): the batch
// is off its unit's list (so no claim serves it) and pool:<pool> still
// names the unit, so the source's later batches wait in its backlog.
// `mass resume` puts it back to work.
func (k Keys) BatchPaused(pool string) string { return k.key("batch", "paused", pool) }

// UnitQueuesMemberPrefix is UnitQueuesMember(pool, "") up to the unit id,
// "pool:<pool>:", for scripts that learn the unit from pool:<pool>.
func UnitQueuesMemberPrefix(pool string) string { return "pool:" + pool + ":" }
