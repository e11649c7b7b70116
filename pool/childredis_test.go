package pool

import (
	"reflect"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/node"
)

// The manager's TLS and Sentinel settings (its --tls-* and
// --sentinel-password flags) reach every child, and pool check masks the
// Sentinel password.
func TestChildGetsManagersRedisTLS(t *testing.T) {
	cfg := parse(t, "workers: {a: 1}\n", LoadOptions{})
	cfg.RedisTLS = node.Redis{TLSCAFile: "/ca.pem", TLSCertFile: "/c.pem", TLSKeyFile: "/k.pem",
		TLSServerName: "redis.internal", TLSInsecureSkipVerify: true, SentinelPassword: "s3cret"}
	got := cfg.Child(cfg.Sets[0]).Redis
	want := cfg.RedisTLS
	if !reflect.DeepEqual(got, want) {
		t.Errorf("child redis = %+v, want %+v", got, want)
	}
	if zero := zeroFields(reflect.ValueOf(got), ""); len(zero) != 2 { // URL and Namespace: defaults here
		t.Errorf("zero fields %v", zero)
	}
	if d := describeChild(cfg.Child(cfg.Sets[0])); strings.Contains(d, "s3cret") || !strings.Contains(d, "redis.internal") {
		t.Errorf("pool check line: %s", d)
	}
}

// zeroFields names the fields of v (recursively) that hold their zero
// value.
func zeroFields(v reflect.Value, prefix string) []string {
	var out []string
	for i := range v.NumField() {
		f, name := v.Field(i), prefix+v.Type().Field(i).Name
		if f.Kind() == reflect.Struct {
			out = append(out, zeroFields(f, name+".")...)
		} else if f.IsZero() {
			out = append(out, name)
		}
	}
	return out
}
