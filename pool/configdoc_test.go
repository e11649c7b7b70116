package pool

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every key the config decoder accepts, in every dialect, is named in the
// "Pool file" section of docs/configuration.md.
func TestConfigurationDocNamesEveryPoolKey(t *testing.T) {
	raw, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "\n## Pool file\n")
	if i < 0 {
		t.Fatal("docs/configuration.md has no \"## Pool file\" section")
	}
	section := doc[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	named := map[string]bool{}
	for _, span := range regexp.MustCompile("`[^`]+`").FindAllString(section, -1) {
		for _, w := range regexp.MustCompile(`[a-z_]+`).FindAllString(span, -1) {
			named[w] = true
		}
	}
	var keys []string
	for _, list := range [][]string{ownKeys, v3OnlyKeys, v3LogKeys, redisKeys, setKeys, retentionKeys,
		{"workers", "queues", "level", "format", "exec", "http", "url", "token", "connect_timeout", "timeout",
			"schedule", "environment", "dynamic"}} {
		keys = append(keys, list...)
	}
	for _, k := range keys {
		if !named[k] {
			t.Errorf("docs/configuration.md, Pool file: the key %q is not named", k)
		}
	}
}
