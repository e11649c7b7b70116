package rdb

import (
	"io/fs"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// layoutLine is a header's line naming one entry of the module's slice:
// "-- KEYS[+0] queuedata:<q>:lock  description".
var layoutLine = regexp.MustCompile(`^-- (KEYS|ARGV)\[\+(\d+)\]\s+(\S+)(.*)$`)

// moduleHeader returns the KEYS and ARGV names a module's header gives its
// slice, in order, and the tag its section opens with ("" for none).
func moduleHeader(t *testing.T, name, src string) (keys, args []string, tag string) {
	t.Helper()
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "--") {
			break // the header ends at the code
		}
		m := layoutLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		list := &keys
		if m[1] == "ARGV" {
			list = &args
		}
		if want := len(*list); m[2] != strconv.Itoa(want) {
			t.Errorf("%s: %s[+%s] %s comes where %s[+%d] is due", name, m[1], m[2], m[3], m[1], want)
		}
		*list = append(*list, m[3])
		if m[1] == "ARGV" && m[3] == "tag" {
			tag = strings.Trim(strings.TrimSpace(m[4]), `"`)
		}
	}
	return keys, args, tag
}

// Every module of the job's path names its slice of KEYS and ARGV in its
// header as its Go layout does, and is part of the library.
func TestJobpathHeaders(t *testing.T) {
	layouts := map[string]jobpathLayout{}
	for _, l := range jobpathLayouts {
		layouts[l.Module] = l
	}
	files, err := fs.Glob(scriptFS, "scripts/jobpath/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		mod := strings.TrimSuffix(path.Base(f), ".lua")
		seen[mod] = true
		src := scriptSource("jobpath/" + mod + ".lua")
		if !strings.HasPrefix(src, "-- jobpath/"+mod+".lua: ") {
			t.Errorf("%s: the header does not open with -- jobpath/%s.lua: <what it is>", f, mod)
		}
		if !slices.Contains(jobpathShared, mod) {
			t.Errorf("%s is not in jobpathShared: the library leaves it out", mod)
		}
		keys, args, _ := moduleHeader(t, f, src)
		l := layouts[mod]
		if !slices.Equal(keys, l.Keys) {
			t.Errorf("%s: header KEYS %q, Go layout %q", mod, keys, l.Keys)
		}
		if !slices.Equal(args, l.Args) {
			t.Errorf("%s: header ARGV %q, Go layout %q", mod, args, l.Args)
		}
	}
	for _, l := range jobpathLayouts {
		if !seen[l.Module] {
			t.Errorf("Go layout for %s, which has no scripts/jobpath/%s.lua", l.Module, l.Module)
		}
	}
}

// Each Go layout appends exactly its module's slice, opened by the tag
// its header names.
func TestJobpathLayoutsAppend(t *testing.T) {
	k := protocol.NewKeys("ns")
	tags := map[string]string{}
	for _, l := range jobpathLayouts {
		_, _, tags[l.Module] = moduleHeader(t, l.Module, scriptSource("jobpath/"+l.Module+".lua"))
	}
	for _, tc := range []struct {
		l          jobpathLayout
		keys, args []any
	}{
		{finishPushLayout, nil, nil},
		{effectReleaseLayout, nil, nil},
		{effectUniqueLayout, nil, nil},
		{effectWakeLayout, nil, nil},
		{finishDelayedLayout, nil, nil},
		{effectStatusLayout, nil, nil},
		{effectAttemptsLayout, nil, nil},
		{effectWaitingLayout, nil, nil},
		{effectTagsLayout, nil, nil},
		{effectEventsLayout, nil, nil},
		{effectLimitsLayout, nil, nil},
		{effectDepsLayout, nil, nil},
		{effectGroupLayout, nil, nil},
	} {
		switch tc.l.Module {
		case "finish_push":
			tc.keys, tc.args = appendFinishPush(nil, nil)
		case "effect_release":
			tc.keys, tc.args = appendEffectRelease(k, nil, nil, "q", "token")
		case "effect_unique":
			tc.keys, tc.args = appendEffectUnique(k, nil, nil, "uid", time.Now())
		case "effect_wake":
			tc.keys, tc.args = appendEffectWake(nil, nil, "ring", "state", "source")
		case "finish_delayed":
			tc.keys, tc.args = appendFinishDelayed(k, nil, nil, 5, []byte("item"))
		case "effect_status":
			tc.keys, tc.args = appendEffectStatus(k, nil, nil, "id", "v3:completed")
		case "effect_attempts":
			tc.keys, tc.args = appendEffectAttempts(k, nil, nil, "digest", 2, time.Hour)
		case "effect_waiting":
			tc.keys, tc.args = appendEffectWaiting(k, nil, nil, "new")
		case "effect_tags":
			tc.keys, tc.args = appendEffectTags(k, nil, nil, "id", []string{"one"})
		case "effect_events":
			tc.keys, tc.args = appendEffectEvents(newEventsParts(k, EventsConfig{On: true}), nil, nil, Outcome{Kind: OutcomeFail})
		case "effect_limits":
			tc.keys, tc.args = appendEffectLimits(k, nil, nil, "w:1", 1, []LimitHold{{Name: "class:C", Cap: 2}})
		case "effect_deps":
			tc.keys, tc.args = appendEffectDeps(k, nil, nil, "id", time.Now())
		case "effect_group":
			tc.keys, tc.args = appendEffectGroup(k, nil, nil, "g", time.Now())
		}
		if len(tc.keys) != len(tc.l.Keys) || len(tc.args) != len(tc.l.Args) {
			t.Errorf("%s appends %d keys and %d arguments, its layout has %d and %d",
				tc.l.Module, len(tc.keys), len(tc.args), len(tc.l.Keys), len(tc.l.Args))
		}
		if tag := tags[tc.l.Module]; len(tc.args) == 0 || tc.args[0] != tag {
			t.Errorf("%s opens its section with %v, its header says %q", tc.l.Module, tc.args, tag)
		}
	}
	c, err := New(Options{URL: "redis://127.0.0.1:1", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		src  protocol.Source
		l    jobpathLayout
		kind string
	}{{protocol.StaticPoolSource("p"), sourceStaticRingLayout, "s"}, {protocol.UnitSource("bp", "u1"), sourceUnitRingLayout, "u"}} {
		got := c.ringArgs(tc.src)
		header := scriptSource("jobpath/" + tc.l.Module + ".lua")
		if len(got) != len(tc.l.Args) || got[0] != any(tc.kind) || !strings.Contains(header, `-- ARGV[+0] kind             "`+tc.kind+`"`) {
			t.Errorf("%s: a description of %d arguments (%v), its layout has %d, kind %q", tc.l.Module, len(got), got, len(tc.l.Args), tc.kind)
		}
	}
	keys, args := c.buildClaimKeysArgs(ClaimArgs{WorkerID: "w", Sources: []protocol.Source{protocol.QueueSource("q")}, Now: time.Now()})
	// one plain queue: its list, no second key; ARGV[+0] says one source
	if len(keys) != len(claimLayout.Keys)+1 || args[0] != any("1") || args[3] != any("w") || keys[1] != any(k.Worker("w")) {
		t.Errorf("the claim's fixed part is not claimLayout's: %q %q", keys, args)
	}
	// a plain success, a failure and a plain retry send the outcome's
	// layout and no effect's section; a retry through the delayed queue
	// adds the delayed push's
	for _, tc := range []struct {
		kind OutcomeKind
		due  int64
		want [2]int
		deps bool
	}{{OutcomeOK, 0, [2]int{5, 7}, false}, {OutcomeFail, 0, [2]int{8, 7}, false}, {OutcomeRetry, 0, [2]int{13, 9}, false}, {OutcomeRetry, 5, [2]int{16, 11}, false},
		// a job's end with dependencies in use and a group: both sections;
		// a retry is no end: neither
		{OutcomeOK, 0, [2]int{9, 19}, true}, {OutcomeRetry, 0, [2]int{13, 9}, true}} {
		kind, want := tc.kind, tc.want
		o := Outcome{Kind: kind, Seq: "1", DueAt: tc.due}
		if tc.deps {
			o.DepsID, o.Group = "id", "g"
		}
		keys, args := c.finishKeysArgs("w", "h", protocol.Source{Queue: "q", List: "other"}, o)
		if len(keys) != want[0] || len(args) != want[1] || len(finishLayout.Keys) != 13 || len(finishLayout.Args) != 9 {
			t.Errorf("%s: %d keys and %d arguments, want %v", kind, len(keys), len(args), want)
		}
	}
}

// luaString is a Lua string literal next to a concatenation ("..").
var luaString = regexp.MustCompile(`(\.\.\s*('[^'\n]*'|"[^"\n]*"))|(('[^'\n]*'|"[^"\n]*")\s*\.\.)`)

// keyish reports whether a Lua string literal s looks like a part of a key
// name: a key word of internal/protocol, or words joined by ':'. Hash
// fields (m:, t:, <source>:weight...) and messages (with a space) are not.
func keyish(s string, words map[string]bool) bool {
	if words[s] {
		return true
	}
	if !strings.Contains(s, ":") || strings.ContainsAny(s, ` "{},%^$()[]`) {
		return false
	}
	switch s {
	case "m:", "t:", ":weight", ":limit", ":paused":
		// fields of a static pool's state hash and of the mass settings
		// hash (<source>:weight...), not keys
		return false
	}
	return regexp.MustCompile(`^:?[a-z][a-z_-]*(:[a-z_-]+)*:?$`).MatchString(s)
}

// protocolKeyWords are the names of resque's fixed keys, without the
// namespace (queues, failed, stat:processed...), from protocol.Keys.
func protocolKeyWords() map[string]bool {
	k := protocol.NewKeys("ns")
	words := map[string]bool{}
	v := reflect.ValueOf(k)
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Method(i)
		if m.Type().NumIn() != 0 || m.Type().NumOut() != 1 || m.Type().Out(0).Kind() != reflect.String {
			continue
		}
		if s := m.Call(nil)[0].String(); strings.HasPrefix(s, "ns:") {
			words[strings.TrimPrefix(s, "ns:")] = true
		}
	}
	return words
}

// Redis key names are built from internal/protocol: a script takes keys
// through KEYS, prefixes through ARGV, and the parts of a name it builds
// around an id it learns inside from keyGrammarLua. This fails on a key
// name's part written as a Lua literal next to a concatenation.
func TestLuaKeyLiterals(t *testing.T) {
	words := protocolKeyWords()
	if !words["queues"] || !words["failed"] {
		t.Fatalf("no key words from protocol.Keys: %v", words)
	}
	files, err := fs.Glob(scriptFS, "scripts/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := fs.Glob(scriptFS, "scripts/jobpath/*.lua")
	files = append(files, more...)
	for _, f := range files {
		name := strings.TrimPrefix(f, "scripts/")
		for i, line := range strings.Split(scriptSource(name), "\n") {
			code, _, _ := strings.Cut(line, "--")
			for _, m := range luaString.FindAllStringSubmatch(code, -1) {
				lit := m[2] + m[4]
				s := lit[1 : len(lit)-1]
				if !keyish(s, words) {
					continue
				}
				t.Errorf("%s:%d: key name part %s written in Lua: take it from internal/protocol (keyGrammarLua, massKeyGrammarLua, KEYS or ARGV)", name, i+1, lit)
			}
		}
	}
}

// Each per-job script, as a function library and alone (EVALSHA, where
// the claim and the finish carry only their modules), defines every local
// function it calls before the first call: a module missing from hot.go's
// lists, or listed after one that calls it, would make Lua look the name
// up as a global at that call, an error only when that path runs.
func TestJobpathModulesDefinedBeforeUse(t *testing.T) {
	hs := newHotScripts(true, nil)
	def := regexp.MustCompile(`local function ([a-z_]+)\(`)
	all := map[string]bool{}
	for _, m := range def.FindAllStringSubmatch(jobpathSource(jobpathShared)+scriptSource("unique_release.lua")+scriptSource("hot_globals.lua")+scriptSource("set_aside_key.lua"), -1) {
		all[m[1]] = true
	}
	// the optional modules' functions, which the core library leaves out
	optional := map[string]bool{}
	for m := range jobpathOptional {
		for _, f := range def.FindAllStringSubmatch(scriptSource("jobpath/"+m+".lua"), -1) {
			optional[f[1]] = true
		}
	}
	for name, src := range map[string]string{"claim": hs.claim.source(), "finish": hs.finish.source(), "finish_claim": hs.finishClaim.source(),
		"finish_claim_batch": hs.finishClaimBatch.source(), "library": hs.claim.lib.code, "core library": hs.claim.coreLib.code} {
		var code strings.Builder
		for _, line := range strings.Split(src, "\n") {
			c, _, _ := strings.Cut(line, "--")
			code.WriteString(c + "\n")
		}
		text := code.String()
		defined := map[string]int{}
		for _, m := range def.FindAllStringSubmatchIndex(text, -1) {
			defined[text[m[2]:m[3]]] = m[0]
		}
		for fn := range all {
			if name == "core library" && optional[fn] {
				continue // never reached by the calls it runs (hot.go's runCore)
			}
			call := regexp.MustCompile(`(^|[^a-z_.])` + fn + `\(`)
			for _, m := range call.FindAllStringIndex(text, -1) {
				at, ok := defined[fn]
				if strings.HasPrefix(text[m[0]:], "local function") || strings.Contains(text[max(m[0]-15, 0):m[1]], "local function "+fn) {
					continue
				}
				if !ok || m[0] < at {
					t.Errorf("%s: %s is called before it is defined (or never is): add its module to hot.go's lists, before its callers", name, fn)
					break
				}
			}
		}
	}
}

// finish.lua's table of the effects' sections (how many keys and
// arguments each tag's section has) agrees with the modules' Go layouts.
func TestJobpathFinishSectionsTable(t *testing.T) {
	src := scriptSource("jobpath/finish.lua")
	line := regexp.MustCompile(`local finish_sections = \{([^\n]*)\}`).FindStringSubmatch(src)
	if line == nil {
		t.Fatal("no finish_sections in finish.lua")
	}
	lua := map[string][2]int{}
	for _, m := range regexp.MustCompile(`([a-z]) = \{(\d+), (\d+)\}`).FindAllStringSubmatch(line[1], -1) {
		nk, _ := strconv.Atoi(m[2])
		na, _ := strconv.Atoi(m[3])
		lua[m[1]] = [2]int{nk, na}
	}
	goSizes := map[string][2]int{}
	for _, l := range jobpathLayouts {
		// the tags' section has one key a tag: finish_effects reads its size
		if _, _, tag := moduleHeader(t, l.Module, scriptSource("jobpath/"+l.Module+".lua")); tag != "" && tag != "t" {
			goSizes[tag] = [2]int{len(l.Keys), len(l.Args)}
		}
	}
	if len(goSizes) == 0 || !reflect.DeepEqual(lua, goSizes) {
		t.Errorf("finish.lua's sections %v, the Go layouts' %v", lua, goSizes)
	}
}
