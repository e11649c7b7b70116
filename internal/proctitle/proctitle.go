// Package proctitle sets the process title that ps shows in its COMMAND
// column (/proc/<pid>/cmdline), the way Ruby Resque's procline does.
//
// Other runtimes decide from that column whether a worker id of this host
// is alive: Ruby Resque's startup prune keeps same-host ids whose pid shows
// a line matching "resque-<digit>" (among others), php-resque's any line
// with "resque". A title from this package matches both.
//
// On Linux the title overwrites the memory the kernel reads the command line
// from: the argument strings and, after them, the environment strings (Go
// copied the environment into its own memory at start-up, so os.Getenv is
// unaffected). Call Prepare before anything keeps a reference to os.Args:
// the arguments are copied first, because that memory changes.
package proctitle

import (
	"bytes"
	"strings"
	"sync"
)

// Prefix starts every title: "resque-" and a digit, which Ruby Resque 3's
// worker pid check recognises, then what is really running.
const Prefix = "resque-1 (resque-go): "

var (
	mu      sync.Mutex
	area    []byte // nil: titles are not supported or Prepare was not called
	argSize int    // the length of the argument strings at the start of area
	envAt   int    // where the environment strings start in area; 0: none
	titled  bool   // Set has written over the environment strings
)

// Prepare makes os.Args independent of the command-line memory and returns
// the copy of args given (os.Args, usually), so later titles cannot change
// strings the program holds. It is safe to call more than once.
func Prepare(args []string) []string {
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.Clone(a)
	}
	if area == nil {
		area, argSize, envAt = commandLineArea()
	}
	return out
}

// SetArgs shows args in ps in place of the process's arguments, as
// separate strings the way the kernel passed them: a program hides a
// secret of its command line (a password in a URL) by showing its
// arguments with the secret masked. What does not fit the original
// arguments' space is cut. It does nothing where titles are not supported
// or Prepare was not called; a later Set replaces it.
func SetArgs(args []string) {
	mu.Lock()
	defer mu.Unlock()
	if argSize < 2 || len(area) < argSize {
		return
	}
	// the last byte stays NUL: the kernel then shows the argument strings
	// only, NULs between them
	n := copy(area[:argSize-1], strings.Join(args, "\x00"))
	clear(area[n:argSize])
}

// Set shows title (after Prefix) in ps, cut to the space available. It does
// nothing where titles are not supported or Prepare was not called.
func Set(title string) {
	mu.Lock()
	defer mu.Unlock()
	if len(area) < 2 {
		return
	}
	t := Prefix + title
	n := copy(area[:len(area)-1], t)
	clear(area[n:])
	titled = true
}

// MaskEnv rewrites, in the memory the kernel shows as /proc/<pid>/environ
// (and ps e), each environment string "NAME=value" for which mask returns
// another string: the new string is written in its place, cut to the old
// one's length, and the rest of that place zeroed. A password in REDIS_URL
// is then readable only from the copy Go made at start-up (os.Getenv and
// the environment passed to child processes, which filter it themselves).
// It does nothing where titles are not supported, Prepare was not called,
// or Set has already written over the environment.
func MaskEnv(mask func(kv string) string) {
	mu.Lock()
	defer mu.Unlock()
	if envAt <= 0 || envAt >= len(area) || titled {
		return
	}
	env := area[envAt:]
	for len(env) > 0 {
		end := bytes.IndexByte(env, 0)
		if end < 0 {
			end = len(env)
		}
		if kv := string(env[:end]); end > 0 {
			if m := mask(kv); m != kv {
				n := copy(env[:end], m)
				clear(env[n:end])
			}
		}
		if end == len(env) {
			return
		}
		env = env[end+1:]
	}
}

// Capacity is how many bytes of title (Prefix included) fit; 0 when titles
// are not supported.
func Capacity() int {
	mu.Lock()
	defer mu.Unlock()
	return max(len(area)-1, 0)
}
