package examplerun_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/permissionpolicy"
	"github.com/abkit/abkit/internal/dispatch"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/intercept"
)

func dispatcher(t *testing.T, c permissionpolicy.Config) *dispatch.Dispatcher {
	t.Helper()
	ext, err := permissionpolicy.New(c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.New([]dispatch.Contribution{{Manifest: permissionpolicy.Manifest(), Extension: ext}}, dispatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// D9 D10: the first matching rule allows or denies, overriding the host's
// verdict either way; no match leaves the host verdict standing.
func TestRules_D9_D10(t *testing.T) {
	d := dispatcher(t, permissionpolicy.DefaultConfig())
	for _, tc := range []struct {
		name     string
		readOnly bool
		host     intercept.Decision
		want     intercept.Decision
		by       string
	}{
		{"delete_repo", true, intercept.DecisionAllow, intercept.DecisionDeny, permissionpolicy.Name}, // deny rule first, even for read-only
		{"read_file", true, intercept.DecisionDeny, intercept.DecisionAllow, permissionpolicy.Name},   // allow overrides host deny
		{"write_file", false, intercept.DecisionDeny, intercept.DecisionDeny, ""},                     // no rule: host verdict
		{"write_file", false, intercept.DecisionAllow, intercept.DecisionAllow, ""},                   // no rule: host verdict
		{"delete_all", false, intercept.DecisionAllow, intercept.DecisionDeny, permissionpolicy.Name}, // glob
	} {
		res, err := d.Dispatch(context.Background(), dispatch.Request{
			Point:   intercept.PermissionDecision,
			Payload: &intercept.PermissionPayload{Name: tc.name, ReadOnly: tc.readOnly, HostDecision: tc.host},
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Permission != tc.want || res.DecidedBy != tc.by {
			t.Errorf("%s (readOnly=%v, host %s): got %s by %q, want %s by %q", tc.name, tc.readOnly, tc.host, res.Permission, res.DecidedBy, tc.want, tc.by)
		}
	}
}

// Bad rules are refused with the rule named.
func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		c    permissionpolicy.Config
		want string
	}{
		{permissionpolicy.Config{Rules: []permissionpolicy.Rule{{Tool: "", Decision: "allow"}}}, "rules[0].tool is empty"},
		{permissionpolicy.Config{Rules: []permissionpolicy.Rule{{Tool: "[", Decision: "allow"}}}, "rules[0].tool"},
		{permissionpolicy.Config{Rules: []permissionpolicy.Rule{{Tool: "x", Decision: "allow"}, {Tool: "y", Decision: "block"}}}, "rules[1].decision"},
	} {
		if _, err := permissionpolicy.New(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

// P5 and the bundle.
func TestPlugin_P5(t *testing.T) {
	p := permissionpolicy.Plugin()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := gateway.CheckDescription(p.Description); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Extension.New(); err != nil {
		t.Fatal(err)
	}
}
