package protocol

import (
	"testing"
	"time"
)

func TestParseLimitAndRate(t *testing.T) {
	for _, tc := range []struct {
		spec, name string
		rate       bool
		n          int
		period     time.Duration
		bad        bool
	}{
		{spec: "Import=5", name: "class:Import", n: 5},
		{spec: "queue:imports=3", name: "queue:imports", n: 3},
		{spec: "Import[args.0.tenant]=2", name: "class:Import[args.0.tenant]=", n: 2},
		{spec: "Mailer=100/1m", name: "class:Mailer", rate: true, n: 100, period: time.Minute},
		{spec: "queue:hooks=20/s", name: "queue:hooks", rate: true, n: 20, period: time.Second},
		{spec: "Import=0", bad: true},
		{spec: "Import", bad: true},
		{spec: "=5", bad: true},
		{spec: "queue:=5", bad: true},
		{spec: "Import[]=5", bad: true},
		{spec: "Import[a..b]=5", bad: true},
		{spec: "Mailer=100", rate: true, bad: true},
		{spec: "Mailer=100/fortnight", rate: true, bad: true},
		{spec: "Mailer=100/1ms", rate: true, bad: true},
	} {
		parse := ParseLimit
		if tc.rate {
			parse = ParseRate
		}
		l, err := parse(tc.spec)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.spec)
			}
			continue
		}
		if err != nil || l.Name() != tc.name || l.N != tc.n || l.Period != tc.period {
			t.Errorf("%q: %+v %v", tc.spec, l, err)
		}
	}
}

func TestLimitKey(t *testing.T) {
	l, _ := ParseLimit("Import[args.0.tenant]=2")
	for payload, want := range map[string]string{
		`{"class":"Import","args":[{"tenant":"acme"}]}`: "acme",
		`{"class":"Import","args":[{"tenant":7}]}`:      "7",
		`{"class":"Import","args":[{"tenant":7.5}]}`:    "",
		`{"class":"Import","args":[]}`:                  "",
		`{"class":"Import","args":[{"tenant":null}]}`:   "",
	} {
		got, ok := l.LimitKey([]byte(payload))
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", payload, got, ok, want)
		}
	}
}
