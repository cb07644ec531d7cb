package conformance

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
)

// addPipelineDescriptorCases registers the cases of what a plugin says about
// itself: its name, capabilities, descriptions and a first instance (P1-P3,
// P5, P6).
func addPipelineDescriptorCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "P1/name/non-empty", Rules: []string{"P1"},
			Summary: "the plugin has a non-empty name without whitespace",
			Explain: `Reads the name from the plugin's descriptor (Describe). Chain entries,
requires lists and traces refer to plugins by this name, so it must be
non-empty; the suite also rejects whitespace, which no chain file can
refer to unquoted.
A failure means sdk.Plugin.Name (and, for a pipeline plugin, the
factory's Name) is empty or has spaces. Fix: give the plugin a short
kebab-case name.`,
			Run: p1NameNonEmpty,
		},
		{
			ID: "P2/name/instance-matches", Rules: []string{"P2", "P1"},
			Summary: "an instance's Name() equals the plugin's registered name",
			Explain: `Makes an instance through the plugin's factory (Describe does it) and
compares its Name() with the descriptor's name. The runtime rejects a
chain whose instance names itself differently.
A failure means Name() returns something other than the factory's name,
often a leftover from copying another plugin. Fix: return the same
constant from both.`,
			Applies: needPipeline,
			Run:     p2NameInstanceMatches,
		},
		{
			ID: "P2/capabilities/instances-agree", Rules: []string{"P2"},
			Summary: "two instances of one factory report the same capabilities",
			Explain: `Describe makes two instances and records what each reports; the case
compares them. Capabilities are type-level metadata (P2): every instance
must report the same value, whatever its configuration or history.
A failure means Capabilities() depends on config, a counter, time or
randomness. Fix: make it return a constant; a plugin whose behaviour
differs must be registered under another name.`,
			Applies: needPipeline,
			Run:     p2CapabilitiesInstancesAgree,
		},
		{
			ID: "P2/capabilities/across-processes", Rules: []string{"P2"}, FreshProcess: true,
			Summary: "two fresh plugin processes describe themselves identically",
			Explain: `Starts a second, fresh copy of the plugin and compares its whole
descriptor with the first one's: name, description, families,
capabilities, behaviours, config schema, manifest and hook specs.
A failure means what the plugin says about itself depends on the process:
the environment, the time, a random seed, map iteration order. Fix: make
the descriptor a constant of the binary.`,
			Run: p2CapabilitiesAcrossProcesses,
		},
		{
			ID: "P3/capabilities/fields", Rules: []string{"P3"},
			Summary: "requires and requires_any name plugins: non-empty, distinct, not itself",
			Explain: `Checks the capability fields of a probe instance: every name in
requires and requires_any is non-empty, has no whitespace, appears once,
and is not the plugin's own name (a plugin cannot stand before itself).
A failure means a malformed dependency list; the chain builder would
reject every chain. Fix: list the names of the plugins yours depends on.`,
			Applies: needPipeline,
			Run:     p3CapabilitiesFields,
		},
		{
			ID: "P5/description/plugin", Rules: []string{"P5"},
			Summary: "the plugin's description is one line of at most 80 characters",
			Explain: `Checks the descriptor's description: non-empty, one line (no line
breaks of any kind), at most 80 characters counted as runes. Catalog
panes and the plugin list endpoint show it as is.
Fix: shorten it; put details in your README.`,
			Run: p5DescriptionPlugin,
		},
		{
			ID: "P5/description/capabilities", Rules: []string{"P5"},
			Summary: "the capability description is one line of at most 80 characters",
			Explain: `Checks Capabilities().Description of a probe instance, which the
pipeline shows to operators, under the same rule as the plugin's own
description. The reference runtime refuses to build a chain with a bad
one, so the exchange cases are skipped until it is fixed.
Fix: shorten it to one line of at most 80 characters.`,
			Applies: needPipeline,
			Run:     p5DescriptionCapabilities,
		},
		{
			ID: "P6/instance/default-config", Rules: []string{"P6"},
			Summary: "an instance can be made with no config, the defaults or a sample config",
			Explain: `Describe tries to make instances with no config block, then one made of
the schema's defaults, then a sample with every field set. The suite
needs one instance to test anything else.
A failure means the factory refuses all three (or panics, or returns
nil). Fix: accept an empty config with sensible defaults, or give the
required fields defaults in the schema, or list configs it accepts in
ConfigSchema.Examples (tried last).
A plugin that takes configuration but describes none of it (a schema
with no fields and no examples) and refuses to be made without it is
not probed: the case is skipped with that reason, not failed.`,
			Applies: all(needFamily(family.Pipeline), probeable),
			Run:     p6InstanceDefaultConfig,
		},
	} {
		r.Add(c)
	}
}

func p1NameNonEmpty(t *T) {
	d := t.Describe()
	switch {
	// The source asks only for a case-sensitive string; a
	// non-empty name without whitespace is what abkit's chains
	// can refer to (choice P1.names).
	case d.Name == "":
		t.ChoiceErrorf("P1.names", "P1", "the descriptor's name is empty")
	case strings.IndexFunc(d.Name, unicode.IsSpace) >= 0:
		t.ChoiceErrorf("P1.names", "P1", "name %q contains whitespace", d.Name)
	}
}

func p2NameInstanceMatches(t *T) {
	d := t.Describe()
	for i, o := range d.Pipeline.Observed {
		if o.Name != d.Name {
			t.Errorf("P2", "instance %d reports Name() %q, the plugin is registered as %q", i+1, o.Name, d.Name)
		}
	}
}

func p2CapabilitiesInstancesAgree(t *T) {
	d := t.Describe()
	for i, o := range d.Pipeline.Observed {
		t.Diff("P2", fmt.Sprintf("capabilities of instance %d differ from the first instance's", i+1), d.Pipeline.Capabilities, o.Capabilities)
	}
}

func p2CapabilitiesAcrossProcesses(t *T) {
	other, err := t.Launch()
	if err != nil {
		t.Fatalf("P2", "a second copy of the plugin could not be started: %v", err)
	}
	t.Diff("P2", "the second process describes itself differently", t.Describe(), other.Describe())
}

func p3CapabilitiesFields(t *T) {
	d := t.Describe()
	c := d.Pipeline.Capabilities
	for field, names := range map[string][]string{"requires": c.Requires, "requires_any": c.RequiresAny} {
		seen := map[string]bool{}
		for _, n := range names {
			switch {
			case n == "" || strings.IndexFunc(n, unicode.IsSpace) >= 0:
				t.Errorf("P3", "%s holds %q, which names no plugin", field, n)
			case n == d.Name:
				t.Errorf("P3", "%s names the plugin itself (%q)", field, n)
			case seen[n]:
				t.Errorf("P3", "%s names %q twice", field, n)
			}
			seen[n] = true
		}
	}
}

func p5DescriptionPlugin(t *T) {
	if err := gateway.CheckDescription(t.Describe().Description); err != nil {
		t.Errorf("P5", "%v", err)
	}
}

func p5DescriptionCapabilities(t *T) {
	if err := gateway.CheckDescription(t.Describe().Pipeline.Capabilities.Description); err != nil {
		t.Errorf("P5", "%v", err)
	}
}

func p6InstanceDefaultConfig(t *T) {
	d := t.Describe()
	if d.Pipeline == nil {
		t.Fatalf("P6", "the descriptor lists family P but has no pipeline information")
	}
	if d.Pipeline.ProbeError != "" {
		t.Errorf("P6", "%s", d.Pipeline.ProbeError)
	}
}

// probeable skips the probe case of a plugin that could not be made and
// whose schema gives no config to try: it takes configuration (a schema)
// but describes neither fields nor examples, so no config it accepts is
// known. Its author has written no schema yet; that is not a P6 failure.
func probeable(d *Reported) string {
	if p := d.Pipeline; p != nil && p.ProbeError != "" && p.Config != nil && !p.Config.Describes() {
		return "not probed: the plugin takes configuration but its schema lists no fields and no examples, and it refuses to be made without config (" +
			p.ProbeError + "); list configs it accepts in ConfigSchema.Examples to have it probed"
	}
	return ""
}
