package failureio

import (
	"bytes"
	"strings"

	"github.com/resque-go/resque-go/failure"
)

// prefilter returns a test that rejects, without decoding it, an entry whose
// bytes cannot match f: each set field that every JSON encoder writes as it
// is (printable ASCII without " \ / < > & ') must appear in the bytes. It
// keeps every entry that may match (and every entry that is not JSON,
// which Match judges).
func prefilter(f failure.Filter) func(raw []byte) bool {
	var need [][]byte
	for _, s := range []string{f.Queue, f.Class, f.Exception} {
		if s != "" && plainJSON(s) {
			need = append(need, []byte(s))
		}
	}
	return func(raw []byte) bool {
		for _, n := range need {
			if !bytes.Contains(raw, n) {
				return false
			}
		}
		return true
	}
}

// plainJSON reports whether s is written the same by every JSON encoder.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f || strings.IndexByte(`"\/<>&'`, b) >= 0 {
			return false
		}
	}
	return true
}
