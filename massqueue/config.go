package massqueue

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Section is the mass-queue part of a config file in the released server's
// format (resqu-server's config.yml), read unchanged; other keys of the
// file are ignored. A resque-go pool file accepts it next to its workers:
// list (embed Section inline).
//
//	node_id: web_1              # unit ids are <node_id>-<k>; default: hostname
//	pools:
//	  static: {general: {worker_count: 2}}
//	  batch:  {imports: {unit_count: 2, workers_per_unit: 2}}
//	mapping:
//	  static: {default: {default: general}}
//	  batch:  {default: {default: imports}, s1: {report: general_batch}}
type Section struct {
	NodeID string `yaml:"node_id"`
	Pools  struct {
		Static map[string]StaticPoolSpec `yaml:"static"`
		Batch  map[string]BatchPoolSpec  `yaml:"batch"`
	} `yaml:"pools"`
	Mapping struct {
		Static Mapping `yaml:"static"`
		Batch  Mapping `yaml:"batch"`
	} `yaml:"mapping"`
}

// StaticPoolSpec is pools.static.<name>.
type StaticPoolSpec struct {
	WorkerCount *int `yaml:"worker_count"`
}

// BatchPoolSpec is pools.batch.<name>.
type BatchPoolSpec struct {
	UnitCount      *int `yaml:"unit_count"`
	WorkersPerUnit *int `yaml:"workers_per_unit"`
}

// Mapping is mapping.static or mapping.batch: source id (or "default") ->
// job name (or "default") -> pool name.
type Mapping map[string]map[string]string

// Default is the wildcard source and job name of a Mapping.
const Default = "default"

// StaticPool is a static pool: WorkerCount workers serve its sources.
type StaticPool struct {
	Name        string
	WorkerCount int
}

// BatchPool is a batch pool: UnitCount units of WorkersPerUnit workers.
type BatchPool struct {
	Name           string
	UnitCount      int
	WorkersPerUnit int
}

// Config is a checked mass-queue config.
type Config struct {
	// NodeID names this host's units (<NodeID>-<k>): [A-Za-z0-9_] only.
	NodeID        string
	StaticPools   []StaticPool // sorted by name
	BatchPools    []BatchPool  // sorted by name
	StaticMapping Mapping
	BatchMapping  Mapping
}

// ErrConfig is wrapped by every config error.
var ErrConfig = errors.New("massqueue: bad config")

var nodeIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\w+$`) })

// LoadConfig reads a config file (see Section); hostname is the default
// node id.
func LoadConfig(path, hostname string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	cfg, err := ParseConfig(data, hostname)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig parses a YAML config (see Section).
func ParseConfig(data []byte, hostname string) (*Config, error) {
	var s Section
	if err := yaml.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return s.Config(hostname)
}

// NodeIDFromHost turns a host name into a node id: characters outside
// [A-Za-z0-9_] become '_' (the released server turns '-' into '_').
func NodeIDFromHost(host string) string {
	host, _, _ = strings.Cut(host, ".")
	b := []byte(host)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "node"
	}
	return string(b)
}

// Config checks the section: a node id of [A-Za-z0-9_] (default: the host
// name made so), pool names without ':' and unique across both kinds,
// worker_count, unit_count and workers_per_unit given and >= 0, and a
// mapping with default.default for each kind that has pools. A mapping may
// name pools this file lacks (another host may serve them; a job for a pool
// nobody serves goes to batch:allocation_failures).
func (s Section) Config(hostname string) (*Config, error) {
	bad := func(format string, a ...any) (*Config, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, a...)...)
	}
	cfg := &Config{NodeID: s.NodeID, StaticMapping: s.Mapping.Static, BatchMapping: s.Mapping.Batch}
	if cfg.NodeID == "" {
		cfg.NodeID = NodeIDFromHost(hostname)
	}
	if !nodeIDRE().MatchString(cfg.NodeID) {
		return bad("node_id %q must be letters, digits and _ only", cfg.NodeID)
	}
	for name, p := range s.Pools.Static {
		if err := protocol.CheckPoolName(name); err != nil {
			return bad("pools.static: %v", err)
		}
		if p.WorkerCount == nil || *p.WorkerCount < 0 {
			return bad("pools.static.%s.worker_count must be given, >= 0", name)
		}
		cfg.StaticPools = append(cfg.StaticPools, StaticPool{Name: name, WorkerCount: *p.WorkerCount})
	}
	for name, p := range s.Pools.Batch {
		if err := protocol.CheckPoolName(name); err != nil {
			return bad("pools.batch: %v", err)
		}
		if _, dup := s.Pools.Static[name]; dup {
			return bad("pool %q is both static and batch: pool names must be unique", name)
		}
		if p.UnitCount == nil || *p.UnitCount < 0 || p.WorkersPerUnit == nil || *p.WorkersPerUnit < 0 {
			return bad("pools.batch.%s.unit_count and workers_per_unit must be given, >= 0", name)
		}
		cfg.BatchPools = append(cfg.BatchPools, BatchPool{Name: name, UnitCount: *p.UnitCount, WorkersPerUnit: *p.WorkersPerUnit})
	}
	sort.Slice(cfg.StaticPools, func(i, j int) bool { return cfg.StaticPools[i].Name < cfg.StaticPools[j].Name })
	sort.Slice(cfg.BatchPools, func(i, j int) bool { return cfg.BatchPools[i].Name < cfg.BatchPools[j].Name })
	for _, m := range []struct {
		kind  string
		m     Mapping
		pools int
	}{{"static", cfg.StaticMapping, len(cfg.StaticPools)}, {"batch", cfg.BatchMapping, len(cfg.BatchPools)}} {
		if m.m == nil && m.pools == 0 {
			continue
		}
		if m.m[Default][Default] == "" {
			return bad("mapping.%s.default.default is mandatory", m.kind)
		}
		for src, jobs := range m.m {
			if src != Default && strings.Contains(src, ":") {
				return bad("mapping.%s: source %q contains ':'", m.kind, src)
			}
			for job, pool := range jobs {
				if err := protocol.CheckPoolName(pool); err != nil {
					return bad("mapping.%s.%s.%s: %v", m.kind, src, job, err)
				}
			}
		}
	}
	return cfg, nil
}

// Kind is the path a job takes: static (one by one) or batch.
type Kind string

// Kinds.
const (
	KindStatic Kind = "static"
	KindBatch  Kind = "batch"
)

// HasStatic reports whether the config has a static pool named name.
func (c *Config) HasStatic(name string) bool {
	for _, p := range c.StaticPools {
		if p.Name == name {
			return true
		}
	}
	return false
}

// HasBatch reports whether the config has a batch pool named name.
func (c *Config) HasBatch(name string) bool {
	for _, p := range c.BatchPools {
		if p.Name == name {
			return true
		}
	}
	return false
}

// Map resolves a source's job name through the mapping of kind only (no
// src: override): <s>.<j>, default.<j>, default.default. from names the
// entry used ("" when none applies).
func (c *Config) Map(kind Kind, source, job string) (pool, from string) {
	m := c.StaticMapping
	if kind == KindBatch {
		m = c.BatchMapping
	}
	if p := m[source][job]; p != "" && source != Default {
		return p, fmt.Sprintf("mapping.%s.%s.%s", kind, source, job)
	}
	if p := m[Default][job]; p != "" {
		return p, fmt.Sprintf("mapping.%s.default.%s", kind, job)
	}
	if p := m[Default][Default]; p != "" {
		return p, fmt.Sprintf("mapping.%s.default.default", kind)
	}
	return "", ""
}

// Routing is the routing table the allocation scripts read (see
// internal/rdb/scripts/mass_route.lua): the pools of this config and both
// mappings.
func (c *Config) Routing() []byte {
	set := func(n int, name func(int) string) map[string]int {
		m := make(map[string]int, n)
		for i := 0; i < n; i++ {
			m[name(i)] = 1
		}
		return m
	}
	r := struct {
		Static  map[string]int     `json:"static"`
		Batch   map[string]int     `json:"batch"`
		Mapping map[string]Mapping `json:"mapping"`
	}{
		Static:  set(len(c.StaticPools), func(i int) string { return c.StaticPools[i].Name }),
		Batch:   set(len(c.BatchPools), func(i int) string { return c.BatchPools[i].Name }),
		Mapping: map[string]Mapping{},
	}
	if c.StaticMapping != nil {
		r.Mapping["static"] = c.StaticMapping
	}
	if c.BatchMapping != nil {
		r.Mapping["batch"] = c.BatchMapping
	}
	b, _ := json.Marshal(r) // maps of strings always encode
	return b
}

// UnitID is the id of this node's unit k (from 0) of a batch pool.
func (c *Config) UnitID(k int) string { return fmt.Sprintf("%s-%d", c.NodeID, k) }
