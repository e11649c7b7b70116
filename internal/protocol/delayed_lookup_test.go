package protocol

import (
	"strings"
	"testing"
)

func TestScriptJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[1, "two", 3.50, {"k" : "v"}, null, true, 12345678901234567890]`, `[1,"two",3.50,{"k":"v"},null,true,12345678901234567890]`},
		{`["\u00e9 \u2713 <tag>&", "a\/b"]`, `["é ✓ <tag>&","a/b"]`}, // PHP's escapes
		{`["q\"b\\s", "\u0001\n\t\b\f\r"]`, `["q\"b\\s","\u0001\n\t\b\f\r"]`},
		{`{"b":[],"a":{}}`, `{"b":[],"a":{}}`},
		{`[[1,[2,{"x":[3]}]],4]`, `[[1,[2,{"x":[3]}]],4]`},
		{` "s" `, `"s"`},
	} {
		got, err := ScriptJSON([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("ScriptJSON(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `[1`, `[1] [2]`, `{"a"}`} {
		if _, err := ScriptJSON([]byte(bad)); err == nil {
			t.Errorf("ScriptJSON(%q): no error", bad)
		}
	}
}

func TestDelayedItemForms(t *testing.T) {
	forms, err := DelayedItemForms("Mail", []byte(`[1, "\u00e9"]`), "mail")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"class":"Mail","args":[1,"\u00e9"],"queue":"mail"}`, // as typed, compacted (resque-go's enqueue)
		`{"class":"Mail","queue":"mail","args":[1,"\u00e9"]}`,
		`{"class":"Mail","args":[1,"é"],"queue":"mail"}`, // resque-scheduler
		`{"class":"Mail","queue":"mail","args":[1,"é"]}`, // node-resque
	}
	var got []string
	for _, f := range forms {
		got = append(got, string(f))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("forms:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ts, ok := ParseDelayedMember("delayed:1795299965"); !ok || ts != 1795299965 {
		t.Errorf("ParseDelayedMember = %d %v", ts, ok)
	}
	for _, bad := range []string{"1795299965", "delayed:", "delayed:1.5", "resque:delayed:1"} {
		if _, ok := ParseDelayedMember(bad); ok {
			t.Errorf("ParseDelayedMember(%q) ok", bad)
		}
	}
}
