package cli

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/worksettings"
	"github.com/resque-go/resque-go/node"
)

// workSettingFlags are work's own flags, one per row of the settings
// table, in its order.
func workSettingFlags() []ucli.Flag {
	flags := make([]ucli.Flag, 0, len(worksettings.Table))
	for i := range worksettings.Table {
		flags = append(flags, settingFlag(&worksettings.Table[i]))
	}
	return flags
}

// settingFlag is the flag of one setting: its first environment variable
// is the flag's (the others are envAliases).
func settingFlag(s *worksettings.Setting) ucli.Flag {
	var aliases, env []string
	if s.Short != "" {
		aliases = []string{s.Short}
	}
	if len(s.Env) > 0 {
		env = s.Env[:1]
	}
	switch s.Type {
	case worksettings.Bool:
		return &ucli.BoolFlag{Name: s.Flag, Aliases: aliases, Usage: s.Usage, Value: s.Default == "true", EnvVars: env, Hidden: s.Hidden}
	case worksettings.Int:
		n, _ := strconv.Atoi(cmp.Or(s.Default, "0")) // the table's defaults are numbers (TestTable)
		return &ucli.IntFlag{Name: s.Flag, Aliases: aliases, Usage: s.Usage, Value: n, EnvVars: env, Hidden: s.Hidden}
	case worksettings.List, worksettings.ClassMap:
		return &ucli.StringSliceFlag{Name: s.Flag, Aliases: aliases, Usage: s.Usage, EnvVars: env, Hidden: s.Hidden}
	}
	return &ucli.StringFlag{Name: s.Flag, Aliases: aliases, Usage: s.Usage, Value: s.Default, EnvVars: env, Hidden: s.Hidden}
}

// settingAliases adds the further environment variables of the table's
// settings to aliases (the variables of other flags).
func settingAliases(aliases map[string][]string) map[string][]string {
	for _, s := range worksettings.Table {
		if len(s.Env) > 1 {
			aliases[s.Flag] = s.Env[1:]
		}
	}
	return aliases
}

// settingsFromFlags reads every setting of the table from work's flags
// into cfg. A duration flag given as "" leaves the default. It returns,
// as zero, the error a setting given as 0 deserves once the config is
// otherwise valid (node.Config reads that 0 as the default).
func settingsFromFlags(c *ucli.Context, cfg *node.Config) (zero error, err error) {
	for i := range worksettings.Table {
		s := &worksettings.Table[i]
		var v worksettings.Value
		switch s.Type {
		case worksettings.Bool:
			v.Bool = c.Bool(s.Flag)
		case worksettings.Int:
			v.Int = c.Int(s.Flag)
			if v.Int == 0 && s.Want != "" && zero == nil {
				zero = usagef("--%s 0: want %s", s.Flag, s.Want)
			}
		case worksettings.List, worksettings.ClassMap:
			v.List = c.StringSlice(s.Flag)
		case worksettings.String:
			v.String = c.String(s.Flag)
		case worksettings.Duration:
			text := c.String(s.Flag)
			if v.Duration, err = parseSeconds(s.Flag, text); err != nil {
				return nil, err
			}
			if v.Duration == 0 && s.Want != "" && zero == nil {
				zero = usagef("--%s %q: want %s", s.Flag, text, s.Want)
			}
			if v.Duration != 0 && (v.Duration < s.MinDuration || s.MaxDuration > 0 && v.Duration > s.MaxDuration) {
				return nil, usagef("--%s %q: want %s", s.Flag, text, s.Want)
			}
			if strings.TrimSpace(text) == "" {
				continue
			}
		}
		s.Set(cfg, v)
	}
	return zero, nil
}

// configFlags names the flag of each node.Config (and SchedulerConfig)
// field that work and scheduler take, the longer field names first (so
// that Config.HTTPTimeout is not read as Config.HTTP).
var configFlags = func() *strings.Replacer {
	pairs := [][2]string{
		{"Config.LogLevel", "--log-level"}, {"Config.LogFormat", "--log-format"},
		{"Config.Exec", "--exec"}, {"Config.HTTP", "--http"},
		{"Config.HTTPConnectTimeout", "--http-connect-timeout"}, {"Config.HTTPTimeout", "--http-timeout"},
		{"SchedulerConfig.Hostname", "--hostname"}, {"SchedulerConfig.MetricsAddr", "--metrics-addr"},
	}
	for _, s := range worksettings.Table {
		pairs = append(pairs, [2]string{"Config." + s.Field, "--" + s.Flag})
	}
	slices.SortStableFunc(pairs, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	var args []string
	for _, p := range pairs {
		args = append(args, p[0], p[1])
	}
	return strings.NewReplacer(args...)
}()
