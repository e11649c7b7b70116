package worksettings

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/resque-go/resque-go/node"
)

// Every row names a node.Config field and sets that field, and no other;
// flags, short names, keys and environment variables are each used once.
func TestTable(t *testing.T) {
	seen := map[string]string{}
	once := func(kind, name, field string) {
		if name == "" {
			return
		}
		if other, ok := seen[kind+" "+name]; ok {
			t.Errorf("%s %q: used by %s and %s", kind, name, other, field)
		}
		seen[kind+" "+name] = field
	}
	for _, s := range Table {
		once("field", s.Field, s.Field)
		once("flag", s.Flag, s.Field)
		once("flag", s.Short, s.Field)
		once("key", s.Key, s.Field)
		once("set key", s.SetKey, s.Field)
		for _, e := range s.Env {
			once("env", e, s.Field)
		}
		if _, ok := reflect.TypeOf(node.Config{}).FieldByName(s.Field); !ok {
			t.Errorf("%s: no such node.Config field", s.Field)
			continue
		}
		if s.Type == Int && s.Default != "" {
			if _, err := strconv.Atoi(s.Default); err != nil {
				t.Errorf("%s: default %q is not a number", s.Field, s.Default)
			}
		}
		if s.Type == Duration && (s.MinDuration > 0 || s.MaxDuration > 0) && s.Want == "" {
			t.Errorf("%s: a bounded duration needs Want, for work's message", s.Field)
		}
		if (s.Key != "" || s.SetKey != "") && (s.Type == Int && s.Max == 0 || s.Type == List) {
			t.Errorf("%s: a pool-file key of type %d needs bounds and a file form", s.Field, s.Type)
		}
		// a value other than each type's default
		var c node.Config
		s.Set(&c, Value{Bool: s.Default != "true", Int: 7, Duration: 2 * time.Second, String: "x", List: []string{"A=1"}})
		got := reflect.ValueOf(c)
		for i := range got.NumField() {
			name := got.Type().Field(i).Name
			changed := !got.Field(i).IsZero()
			if want := name == s.Field || s.Field == "Interval" && name == "Drain"; changed && !want || name == s.Field && !changed {
				t.Errorf("%s: Set changed %s: %v", s.Field, name, changed)
			}
		}
	}
	if ByKey("mover") == nil || ByKey("") != nil || ByFlag("fail-retries").Key != "fail_retries" {
		t.Error("ByKey, ByFlag")
	}
	if BySetKey("concurrency").Field != "Concurrency" || BySetKey("") != nil || BySetKey("mover") != nil {
		t.Error("BySetKey")
	}
}
