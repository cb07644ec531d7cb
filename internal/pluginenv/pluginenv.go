// Package pluginenv decides which of the host's environment variables a
// plugin process gets, and a runtime that `conformance run --runtime`
// starts (conformance's plugin in this sense). go-plugin passes the whole
// environment by default, so a plugin could read OPENAI_API_KEY and every
// other credential of the operator's shell. A plugin gets the variables a
// process needs to run (PATH, HOME, locale, temporary directory, time
// zone), abkit's own (ABKIT_*), the Go runtime's (GO*) and go-plugin's
// (PLUGIN_*); ABKIT_PLUGIN_ENV names more, comma-separated
// (ABKIT_PLUGIN_ENV=OPENAI_API_KEY,HTTPS_PROXY). docs/protocol.md.
package pluginenv

import (
	"os"
	"strings"
)

// Extra is the variable that names more variables to pass.
const Extra = "ABKIT_PLUGIN_ENV"

var exact = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "PWD": true, "HOSTNAME": true,
	"TMPDIR": true, "TMP": true, "TEMP": true, "TZ": true, "LANG": true, "LANGUAGE": true, "TERM": true,
	"SYSTEMROOT": true, "SYSTEMDRIVE": true, "WINDIR": true, "COMSPEC": true, "PATHEXT": true,
}

var prefixes = []string{"LC_", "ABKIT_", "GO", "PLUGIN_", "XDG_"}

// Filter returns the entries (NAME=value) of environ a plugin gets.
func Filter(environ []string) []string {
	extra := map[string]bool{}
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, Extra+"="); ok {
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n != "" {
					extra[n] = true
				}
			}
		}
	}
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if allowed(name) || extra[name] {
			out = append(out, kv)
		}
	}
	return out
}

func allowed(name string) bool {
	if exact[strings.ToUpper(name)] {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Environ is Filter of the host's environment.
func Environ() []string { return Filter(os.Environ()) }
