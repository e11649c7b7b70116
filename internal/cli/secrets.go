package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// secretFlag reports whether the value of flag name is a secret: such a
// value is never shown on the command line, and a job process never gets
// the flag's environment variable (see worker.ExecHandler). A URL's
// password (--redis, --http) is masked wherever the URL is shown. A serial
// lock's --token (queue unlock) is masked on the command line too: it is
// shown by queue locks, and a ps line need not show it.
func secretFlag(name string) bool {
	switch name {
	case "sentinel-password", "http-token", "metrics-token", "users", "token":
		return true
	}
	return false
}

// secretMask stands for a secret that is not shown.
const secretMask = "***"

// maskArgs is args (os.Args form) as ps may show them: the values of
// secret flags ("--http-token X", "--http-token=X") and the user info of
// URLs (the password, or a user name given alone, which may be a token)
// replaced by secretMask. After "--" only URLs are masked.
func maskArgs(args []string) []string {
	out := make([]string, len(args))
	flags := true
	for i := 0; i < len(args); i++ {
		a := args[i]
		out[i] = maskURLs(a)
		if i == 0 || !flags || !strings.HasPrefix(a, "-") {
			continue
		}
		if a == "--" {
			flags = false
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !secretFlag(name):
		case hasValue:
			out[i] = a[:len(a)-len(value)] + secretMask
		case i+1 < len(args):
			i++
			out[i] = secretMask
		}
	}
	return out
}

// maskURLs replaces the user info of every URL in s ("scheme://user:pass@")
// with "user:***" (or "***" when there is no password: a user name alone
// may be a token).
func maskURLs(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		// the authority ends at the first "/", "?", "#" or space; its user
		// info at its last "@" (as net/url reads it)
		end := strings.IndexAny(s, "/?# ")
		if end < 0 {
			end = len(s)
		}
		at := strings.LastIndex(s[:end], "@")
		if at < 0 {
			continue
		}
		if user, _, hasPass := strings.Cut(s[:at], ":"); hasPass {
			b.WriteString(user + ":" + secretMask)
		} else {
			b.WriteString(secretMask)
		}
		s = s[at:]
	}
}

// secretEnvVars are the environment variables of cmds' secret flags (their
// own and their envAliases).
func secretEnvVars(cmds []*ucli.Command) map[string]bool {
	vars := map[string]bool{}
	var walk func(cmds []*ucli.Command)
	walk = func(cmds []*ucli.Command) {
		for _, cmd := range cmds {
			for _, f := range cmd.Flags {
				name := f.Names()[0]
				if !secretFlag(name) {
					continue
				}
				if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
					for _, v := range ev.GetEnvVars() {
						vars[v] = true
					}
				}
				for _, v := range envAliases[name] {
					vars[v] = true
				}
			}
			walk(cmd.Subcommands)
		}
	}
	walk(cmds)
	return vars
}

// envMasker masks an environment string "NAME=value" as ps e may show it:
// the value of a secret flag's variable replaced by secretMask, the user
// info of URLs elsewhere (REDIS_URL's password) as on the command line.
func envMasker(cmds []*ucli.Command) func(kv string) string {
	secret := secretEnvVars(cmds)
	return func(kv string) string {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			return kv
		}
		if secret[name] {
			return name + "=" + secretMask
		}
		return maskURLs(kv)
	}
}
