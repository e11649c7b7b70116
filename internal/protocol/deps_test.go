package protocol

import "testing"

func TestValidateDepName(t *testing.T) {
	for _, tc := range []struct {
		kind, s string
		ok      bool
	}{
		{"parent id", "0123abcd", true},
		{"parent id", "", false},
		{"parent id", "a,b", false},
		{"parent id", "a b", false},
		{"group", "import-42", true},
		{"group", "x:children", false},
	} {
		if err := ValidateDepName(tc.kind, tc.s); (err == nil) != tc.ok {
			t.Errorf("%s %q: %v", tc.kind, tc.s, err)
		}
	}
}

func TestDepFieldsAreExtraFieldsOnly(t *testing.T) {
	p, err := NewPayload("C", []byte(`[1]`), EnqueueOptions{ID: "i", Deps: DepFields{After: []string{"a", "b"}, AfterGroups: []string{"g"}, OnParentFailure: "drop", Group: "h"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"class":"C","args":[1],"id":"i","queue_time":`
	if string(p[:len(want)]) != want {
		t.Fatalf("%s", p)
	}
	d, err := DecodePayload(p)
	if err != nil || d.Class != "C" || string(d.Args) != "[1]" || PayloadGroup(d) != "h" {
		t.Fatalf("%s: %+v %v", p, d, err)
	}
	plain, _ := NewPayload("C", []byte(`[1]`), EnqueueOptions{Plain: true, Deps: DepFields{Group: "h"}})
	if string(plain) != `{"class":"C","args":[1]}` {
		t.Errorf("plain %s", plain)
	}
}
