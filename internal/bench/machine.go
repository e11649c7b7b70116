package bench

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// machine describes the host, Go and the Redis server.
func (b *bencher) machine(started bool) (Machine, error) {
	m := Machine{
		CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), CPUModel: cpuModel(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, GoVersion: runtime.Version(), Version: b.cfg.Version,
		RedisStarted: started,
	}
	info, err := str(b.mon.do("INFO", "server"))
	if err != nil {
		return m, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			m.RedisVersion = v
		}
	}
	m.Redis = "Redis " + m.RedisVersion
	if started {
		if out, err := exec.Command("redis-server", "--version").Output(); err == nil {
			m.Redis = strings.TrimSpace(string(out))
		}
	}
	return m, nil
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
