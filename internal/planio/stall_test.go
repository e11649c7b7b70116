package planio_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
)

// One bad entry never stops the other plans: a plan_schedule member that
// is not a time, a slot plan_schedule:<ts> of another type, a plan:<id> of
// another type in a due slot and a plan whose queue key holds another type
// sit among good plans due before, beside and after them. The first three
// are set aside with a failed entry naming the key (the keys are kept), the
// fourth stays in its slot for a later pass, and every good plan fires in
// the same pass. Before, the pass stopped at the first of them, every
// second, and no plan of the namespace fired again.
func TestPlannerSetsBadEntriesAside(t *testing.T) {
	t.Parallel()
	e := newEnv(t, t0)
	k := e.c.Keys()
	slot := t0.Unix()
	good := func(id string, ts int64, q string) {
		e.writePHP(id, fmt.Sprintf(`{"class":"G","args":[],"queue":%q,"id":%q,"nextRun":%d,"recurrenceInterval":"PT1H"}`, q, id, ts), ts)
	}
	e.do("ZADD", k.PlanSchedule(), 5, "garbage")
	good("first", slot-30, "q")
	e.do("SET", k.PlanSlot(slot-20), "not a list")
	e.do("ZADD", k.PlanSchedule(), slot-20, slot-20)
	e.do("HSET", k.Plan("hashed"), "class", "X")
	e.do("ZADD", k.PlanSchedule(), slot-10, slot-10)
	e.do("RPUSH", k.PlanSlot(slot-10), "hashed")
	good("beside", slot-10, "q")
	good("stuck", slot-5, "broken")
	e.do("RPUSH", k.PlanSlot(slot-5), "afterstuck")
	e.do("SET", k.Plan("afterstuck"), `{"class":"G","args":[],"queue":"q","id":"afterstuck","nextRun":0,"recurrenceInterval":"PT1H"}`)
	e.do("SET", k.Queue("broken"), "not a list")
	good("last", slot, "q")

	p := e.planner()
	if n := e.pass(p); n != 4 {
		t.Fatalf("fired %d, want the 4 good plans", n)
	}
	if got := len(e.jobs("q")); got != 4 {
		t.Errorf("queue q has %d jobs, want 4", got)
	}
	if got := e.strs("LRANGE", k.PlanSlot(slot-5), 0, -1); len(got) != 1 || got[0] != "stuck" {
		t.Errorf("slot of the plan whose queue is broken: %q", got)
	}
	failed := e.strs("LRANGE", k.Failed(), 0, -1)
	for _, key := range []string{`\"garbage\"`, k.PlanSlot(slot - 20), k.Plan("hashed")} {
		found := false
		for i, raw := range failed {
			fe := protocol.ParseFailedEntry(int64(i), []byte(raw))
			if fe.Unreadable {
				t.Fatalf("failed entry %d is not valid JSON: %s", i, raw)
			}
			found = found || strings.Contains(raw, key)
		}
		if !found {
			t.Errorf("no failed entry names %s: %q", key, failed)
		}
	}
	if len(failed) != 3 {
		t.Errorf("failed has %d entries, want 3: %q", len(failed), failed)
	}
	sched := e.strs("ZRANGE", k.PlanSchedule(), 0, -1)
	if strings.Contains(strings.Join(sched, " "), "garbage") || strings.Contains(strings.Join(sched, " "), fmt.Sprint(slot-20)) {
		t.Errorf("schedule still holds the bad entries: %v", sched)
	}
	if e.str(k.PlanSlot(slot-20)) != "not a list" || e.do("TYPE", k.Plan("hashed")).(string) != "hash" {
		t.Errorf("the keys of another type must be kept")
	}

	// once the queue key is fixed the stuck plan fires
	e.do("DEL", k.Queue("broken"))
	if n := e.pass(p); n != 1 || len(e.jobs("broken")) != 1 {
		t.Fatalf("after the fix: fired %d", n)
	}
}
