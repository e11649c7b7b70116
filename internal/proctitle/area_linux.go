//go:build linux

package proctitle

import (
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// commandLineArea returns the process's argument and environment strings as
// one writable byte slice, after checking with /proc/self/stat that os.Args[0]
// starts it and that the two areas are contiguous, the length of its
// argument strings, and the offset of its environment strings (0 when there
// are none); nil otherwise.
func commandLineArea() ([]byte, int, int) {
	if len(os.Args) == 0 || len(os.Args[0]) == 0 {
		return nil, 0, 0
	}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return nil, 0, 0
	}
	// fields after "pid (comm) ": arg_start is field 48, arg_end 49,
	// env_start 50, env_end 51 (1-based, proc(5)); comm may hold spaces.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return nil, 0, 0
	}
	f := strings.Fields(string(stat[i+1:]))
	const first = 3 // f[0] is field 3 (state)
	if len(f) < 51-first+1 {
		return nil, 0, 0
	}
	num := func(field int) uint64 {
		v, err := strconv.ParseUint(f[field-first], 10, 64)
		if err != nil {
			return 0
		}
		return v
	}
	argStart, argEnd, envStart, envEnd := num(48), num(49), num(50), num(51)
	base := unsafe.StringData(os.Args[0])
	if argStart == 0 || uint64(uintptr(unsafe.Pointer(base))) != argStart || argEnd > envStart || envStart-argEnd > 1 || envEnd <= argStart {
		return nil, 0, 0
	}
	size := envEnd - argStart
	envAt := envStart - argStart
	if envEnd-envStart == 0 {
		size, envAt = argEnd-argStart, 0
	}
	if size > 1<<16 {
		// an environment past 64 KiB is not rewritten (MaskEnv); titles
		// use the first 64 KiB
		size, envAt = 1<<16, 0
	}
	return unsafe.Slice(base, int(size)), int(min(argEnd-argStart, size)), int(envAt)
}
