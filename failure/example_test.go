package failure_test

import (
	"fmt"

	"github.com/resque-go/resque-go/failure"
)

// Parse decodes a failed entry as any Resque writes it; a Filter selects
// entries as client.FailedWhere does.
func ExampleParse() {
	e := failure.Parse(0, []byte(`{"failed_at":"2026/01/05 10:00:00 UTC","payload":{"class":"Resize","args":["cat.png"]},`+
		`"exception":"Errno::ENOSPC","error":"No space left on device","backtrace":["resize.rb:12"],"worker":"host:42:images","queue":"images"}`))
	fmt.Println(e.Class, e.Queue, e.Exception, e.Retryable())
	fmt.Println(string(e.PayloadBytes()))
	fmt.Println(failure.Filter{Exception: "ENOSPC"}.Match(e), failure.Filter{Queue: "mail"}.Match(e))

	bad := failure.Parse(1, []byte(`not json`))
	fmt.Println(bad.Unreadable, bad.Retryable())
	// Output:
	// Resize images Errno::ENOSPC true
	// {"class":"Resize","args":["cat.png"]}
	// true false
	// true false
}
