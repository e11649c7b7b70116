package protocol

import "testing"

func TestDecodeCancelMessage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Cancel
		ok   bool
	}{
		{"12 0 host:1:q", Cancel{WorkerID: "host:1:q", Seq: "12"}, true},
		{"7 1 host:1:a b:2", Cancel{WorkerID: "host:1:a b:2", Seq: "7", Retry: true}, true},
		{"7 2 host:1:q", Cancel{}, false},
		{"7 1", Cancel{}, false},
		{"", Cancel{}, false},
		{" 1 w", Cancel{}, false},
	} {
		got, err := DecodeCancelMessage([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("DecodeCancelMessage(%q) = %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	got, err := DecodeStoredCancel("h:1:q", []byte("3 1"))
	if err != nil || got != (Cancel{WorkerID: "h:1:q", Seq: "3", Retry: true}) {
		t.Errorf("DecodeStoredCancel = %+v, %v", got, err)
	}
}
