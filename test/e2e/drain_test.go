package e2e

import (
	"testing"

	"github.com/resque-go/resque-go/internal/redistest"
)

// work --interval 0 (Ruby's INTERVAL=0) runs what is queued and exits 0.
func TestWorkIntervalZeroDrainsAndExits(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	for range 3 {
		do(t, c, "RPUSH", c.Keys().Queue("q"), `{"class":"Job","args":[]}`)
	}
	p := start(t, ns, "work", "-q", "q", "-c", "2", "--interval", "0", "--exec", "Job=true")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.out.String())
	}
	if n, _ := c.Int(t.Context(), c.Keys().StatProcessed()); n != 3 {
		t.Errorf("stat:processed = %d, want 3", n)
	}
	if ids := do(t, c, "SCARD", c.Keys().Workers()); ids.(int64) != 0 {
		t.Errorf("%d worker ids left registered", ids)
	}
}
