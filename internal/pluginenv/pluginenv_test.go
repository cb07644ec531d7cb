package pluginenv

import (
	"slices"
	"testing"
)

// A plugin gets what a process needs and abkit's own variables, not the
// operator's credentials (a plugin once read OPENAI_API_KEY), unless
// ABKIT_PLUGIN_ENV names them.
func TestFilter(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "ABKIT_MAX_BODY=1MiB", "GOCOVERDIR=/c", "PLUGIN_PROTOCOL_VERSIONS=1",
		"OPENAI_API_KEY=sk-x", "AWS_SECRET_ACCESS_KEY=y", "HTTPS_PROXY=p"}
	got := Filter(env)
	want := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "ABKIT_MAX_BODY=1MiB", "GOCOVERDIR=/c", "PLUGIN_PROTOCOL_VERSIONS=1"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	got = Filter(append(env, Extra+"=HTTPS_PROXY, OPENAI_API_KEY"))
	if !slices.Contains(got, "HTTPS_PROXY=p") || !slices.Contains(got, "OPENAI_API_KEY=sk-x") || slices.Contains(got, "AWS_SECRET_ACCESS_KEY=y") {
		t.Fatalf("with %s: %v", Extra, got)
	}
}
