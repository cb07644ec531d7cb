package catalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/limits"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// ChainFile is a parsed chain file (docs/chains.md): the pipeline chains
// per direction (family P), the agent extensions and their slot claims
// (family D), and the hooks of a hook bus (family H).
type ChainFile struct {
	// Path is the file name findings refer to.
	Path string `json:"-"`
	// Mode is proxy (default) or waypoint (P10).
	Mode       string           `json:"mode,omitempty"`
	Inbound    []ChainEntry     `json:"inbound,omitempty"`
	Outbound   []ChainEntry     `json:"outbound,omitempty"`
	Extensions []ExtensionEntry `json:"extensions,omitempty"`
	Hooks      []HookEntry      `json:"hooks,omitempty"`
	// ToolPolicy is the hook bus's policy for failing tool reactors (H6):
	// fail-open (default), fail-closed or swallow.
	ToolPolicy string `json:"tool_policy,omitempty"`

	pos positions
}

// ChainEntry is one pipeline chain entry (P6).
type ChainEntry struct {
	Name string `json:"name"`
	// OnError is enforce (default), observe or off.
	OnError string `json:"on_error,omitempty"`
	// Config is the entry's config block, any YAML value.
	Config any `json:"config,omitempty"`
	// Source picks where the plugin comes from when its name is both built
	// in and a binary of --plugin-dir: SourceBuiltin or SourceDir; empty
	// leaves it to --prefer-dir (the built-in, unless that flag is given).
	Source string `json:"source,omitempty"`
}

// The sources a chain entry can pick (ChainEntry.Source).
const (
	SourceBuiltin = "builtin"
	SourceDir     = "dir"
)

// ExtensionEntry enables an agent extension. Fields left out keep the
// extension's own manifest values.
type ExtensionEntry struct {
	// Plugin is the extension's plugin ID (D5).
	Plugin   string   `json:"plugin"`
	Priority *int     `json:"priority,omitempty"`
	Required *bool    `json:"required,omitempty"`
	Slots    []string `json:"slots,omitempty"`
	Timeout  string   `json:"timeout,omitempty"`
}

// HookEntry enables the hooks of a plugin on the hook bus. ID selects one
// of the plugin's hooks; empty enables them all. Order and Policy override
// the hook's own.
type HookEntry struct {
	Plugin string `json:"plugin"`
	ID     string `json:"id,omitempty"`
	Order  *int   `json:"order,omitempty"`
	Policy string `json:"policy,omitempty"`
}

// ReadChainFile reads and strictly decodes a chain file. A file that
// cannot be read or decoded is a [*ReadError]; the message carries
// file:line:column.
func ReadChainFile(path string) (*ChainFile, error) {
	data, err := limits.ReadFile(path, "chain file size", limits.ChainFile, "a chain file lists plugins and their config; move large data out of it")
	if err != nil {
		return nil, &ReadError{Source: path, Err: err}
	}
	cf, err := ParseChain(path, data)
	if err != nil {
		return nil, &ReadError{Source: path, Err: err}
	}
	return cf, nil
}

// ParseChain decodes a chain file's contents; name is used in errors and
// findings.
func ParseChain(name string, data []byte) (*ChainFile, error) {
	cf := &ChainFile{}
	if err := DecodeStrict(name, data, cf); err != nil {
		var pe *PosError
		if e, ok := err.(*PosError); ok {
			pe = e
			return nil, pe
		}
		return nil, err
	}
	cf.Path = name
	cf.pos = indexPositions(data)
	if err := cf.checkSources(); err != nil {
		return nil, err
	}
	return cf, nil
}

// checkSources rejects an entry source other than builtin or dir as the
// strict decoder rejects a wrong type: at file:line:column, with the field.
func (cf *ChainFile) checkSources() error {
	for _, dir := range []gateway.Direction{gateway.Inbound, gateway.Outbound} {
		for i, e := range cf.Direction(dir) {
			if e.Source == "" || e.Source == SourceBuiltin || e.Source == SourceDir {
				continue
			}
			field := fmt.Sprintf("%s[%d].source", dir, i)
			at := cf.pos.at("$." + field)
			return &PosError{File: cf.Path, Line: at.line, Col: at.col,
				Msg: fmt.Sprintf("%s: %q is not a plugin source: use %s (the built-in plugin) or %s (the --plugin-dir binary), or leave it out", field, e.Source, SourceBuiltin, SourceDir)}
		}
	}
	return nil
}

// EntryAt is where the entry i of direction dir stands in the file, as
// file:line, for messages about it.
func (cf *ChainFile) EntryAt(dir gateway.Direction, i int) string {
	return fmt.Sprintf("%s:%d", cf.Path, cf.Line(fmt.Sprintf("$.%s[%d]", dir, i)))
}

// Line returns the line of a YAML path in the file, such as
// "$.inbound[2]", or of its nearest parent present.
func (cf *ChainFile) Line(path string) int { return cf.pos.line(path) }

// Direction returns the entries of one direction.
func (cf *ChainFile) Direction(d gateway.Direction) []ChainEntry {
	if d == gateway.Outbound {
		return cf.Outbound
	}
	return cf.Inbound
}

// configJSON returns an entry's config block as JSON, or nil.
func (e ChainEntry) configJSON() ([]byte, error) {
	if e.Config == nil {
		return nil, nil
	}
	return json.Marshal(e.Config)
}

// pipelineInfo is how the pipeline validator sees catalog plugins: only
// family P plugins are registered.
func pipelineInfo(c *Catalog) (func(string) (pipeline.Info, bool), []string) {
	var registered []string
	for _, d := range c.Plugins {
		if d.Capabilities != nil && (len(registered) == 0 || registered[len(registered)-1] != d.Name) {
			registered = append(registered, d.Name)
		}
	}
	lookup := func(name string) (pipeline.Info, bool) {
		d, ok := c.Lookup(name)
		if !ok || d.Capabilities == nil {
			return pipeline.Info{}, false
		}
		return pipeline.Info{Name: d.Name, Capabilities: d.Capabilities.Gateway(d.Description), TakesConfig: d.Config != nil}, true
	}
	return lookup, registered
}

// RuleChainRef is the project's rule for chain files: every extension and
// hook entry names a plugin of the catalog that implements that family.
const RuleChainRef = "C2"

// RuleChainEmpty is the project's rule that a chain file names at least
// one plugin: an empty file (or /dev/null) is a mistake, not a valid chain.
const RuleChainEmpty = "C3"

// FactoryLookup finds the pipeline factory of a plugin that is available to
// run (compiled in, or a loaded plugin binary), so that validation can make
// an instance with each entry's config as the runtime's build does.
type FactoryLookup func(name string) (*gateway.Factory, bool)

// ValidateChain runs every static build check on cf against catalog c and
// returns all findings at once, sorted by line: P6–P10 through the
// reference runtime's validator (pipeline.Validate), each entry's config
// block against its plugin's schema (P6), P11 (a streaming plugin that will
// see no body), D1, D3–D5, D17, D18 for extensions, H1, H3, H6 for hooks,
// C2 for entries naming plugins the catalog lacks and C3 for a file that
// names no plugin at all.
func ValidateChain(cf *ChainFile, c *Catalog) []Finding { return ValidateBuild(cf, c, nil) }

// ValidateBuild is [ValidateChain] plus, for every active pipeline entry
// whose plugin factories can make and whose config passed the schema, the
// factory itself run with the entry's config ([pipeline.Instantiate]): a
// config the plugin rejects is a P6 finding, as it is a build error.
// factories may be nil.
func ValidateBuild(cf *ChainFile, c *Catalog, factories FactoryLookup) []Finding {
	var out []Finding
	add := func(path, plugin, rule, fix, format string, args ...any) {
		at := cf.pos.at(path)
		out = append(out, Finding{File: cf.Path, Line: at.line, Column: at.col, Plugin: plugin, Rule: rule, Msg: fmt.Sprintf(format, args...), Fix: fix})
	}
	if len(cf.Inbound) == 0 && len(cf.Outbound) == 0 && len(cf.Extensions) == 0 && len(cf.Hooks) == 0 {
		add("$", "", RuleChainEmpty, "add inbound or outbound entries, extensions or hooks (docs/chains.md), or check that this is the chain file you meant",
			"the chain file names no plugin: it has no inbound, outbound, extensions or hooks entries")
	}
	lookup, registered := pipelineInfo(c)
	modeReported := false
	for _, dir := range []gateway.Direction{gateway.Inbound, gateway.Outbound} {
		entries := cf.Direction(dir)
		if len(entries) == 0 {
			continue
		}
		spec := pipeline.Spec{Direction: dir, Mode: pipeline.Mode(cf.Mode)}
		for i, e := range entries {
			cfgJSON, err := e.configJSON()
			if err != nil {
				add(fmt.Sprintf("$.%s[%d].config", dir, i), e.Name, "P6", "write the config block as a YAML mapping", "config block cannot be encoded as JSON: %v", err)
			}
			spec.Entries = append(spec.Entries, pipeline.Entry{Plugin: e.Name, OnError: pipeline.OnError(e.OnError), Config: cfgJSON})
		}
		for _, re := range pipeline.Validate(spec, lookup, registered) {
			path := fmt.Sprintf("$.%s[%d]", dir, re.Entry)
			if re.Entry < 0 {
				if re.Rule == "P10" && strings.Contains(re.Msg, "mode") {
					// One mode error per file, not one per direction.
					if modeReported {
						continue
					}
					modeReported = true
					path = "$.mode"
				} else {
					path = "$." + dir.String()
				}
			}
			fix := re.Fix
			if re.Rule == "P6" && re.Plugin != "" {
				if _, known := lookup(re.Plugin); !known {
					// A misspelt name: say which registered one was meant.
					fix = suggest(re.Plugin, registered, fix)
				}
			}
			if path == "$.mode" {
				add(path, re.Plugin, re.Rule, fix, "%s", re.Msg)
				continue
			}
			add(path, re.Plugin, re.Rule, fix, "%s chain: %s", dir, entriesToLines(cf, dir, re.Msg))
		}
		validateConfigs(cf, dir, entries, c, factories, add)
		lintBodies(cf, dir, entries, c, add)
	}
	validateExtensions(cf, c, add)
	validateHooks(cf, c, add)
	SortFindings(out)
	return out
}

// validateConfigs checks each active entry's config block against its
// plugin's schema and then, when factories can make the plugin, runs its
// factory with the block as the runtime's build would.
func validateConfigs(cf *ChainFile, dir gateway.Direction, entries []ChainEntry, c *Catalog, factories FactoryLookup, add func(path, plugin, rule, fix, format string, args ...any)) {
	for i, e := range entries {
		if e.OnError == string(pipeline.Off) {
			continue // the runtime makes no instance of an off entry
		}
		base := fmt.Sprintf("$.%s[%d].config", dir, i)
		d, known := c.Lookup(e.Name)
		if known && d.Config != nil {
			probs := CheckConfig(d.Config, e.Config)
			for _, p := range probs {
				add(base+p.Path, e.Name, "P6", p.Fix, "%s chain: config: %s", dir, p.Msg)
			}
			if len(probs) > 0 {
				continue // the factory would only say the same, less precisely
			}
		}
		if factories == nil {
			continue
		}
		f, ok := factories(e.Name)
		if !ok {
			continue
		}
		cfgJSON, err := e.configJSON()
		if err != nil {
			continue // reported with the entry
		}
		if f.Config == nil && e.Config != nil {
			continue // the validator reports a block given to a plugin that takes none
		}
		p, err := pipeline.Instantiate(f, cfgJSON)
		if err != nil {
			add(base+configKeyIn(err.Error(), e.Config), e.Name, "P6", "fix the entry's config block so the plugin accepts it (abctl catalog show "+e.Name+" lists its fields)",
				"%s chain: %v", dir, err)
			continue
		}
		if p.Name() != f.Name {
			add(fmt.Sprintf("$.%s[%d]", dir, i), e.Name, "P2", "make the plugin's Name() return its registered name",
				"%s chain: factory %q made an instance named %q", dir, f.Name, p.Name())
		}
	}
}

var fieldRef = regexp.MustCompile(`field "([^"]+)"|\b([A-Za-z_][A-Za-z0-9_-]*)\[(\d+)\]`)

// configKeyIn returns the config path (".status", ".allow[0]") of the
// first field of block that a factory's error message names, so that the
// finding points at the key; "" when it names none.
func configKeyIn(msg string, block any) string {
	m, ok := asMap(block)
	if !ok {
		return ""
	}
	for _, sub := range fieldRef.FindAllStringSubmatch(msg, -1) {
		if sub[1] != "" {
			if _, ok := m[sub[1]]; ok {
				return "." + sub[1]
			}
			continue
		}
		if _, ok := m[sub[2]]; ok {
			return "." + sub[2] + "[" + sub[3] + "]"
		}
	}
	return ""
}

var entryRef = regexp.MustCompile(`\bentr(?:y|ies) (\d+)(?: and (\d+))?`)

// entriesToLines rewrites the runtime's entry numbers (counted from 1) in
// msg into file lines, which is what an operator looks for.
func entriesToLines(cf *ChainFile, dir gateway.Direction, msg string) string {
	line := func(num string) string {
		n, _ := strconv.Atoi(num)
		return strconv.Itoa(cf.Line(fmt.Sprintf("$.%s[%d]", dir, n-1)))
	}
	return entryRef.ReplaceAllStringFunc(msg, func(m string) string {
		sub := entryRef.FindStringSubmatch(m)
		if sub[2] != "" {
			return "lines " + line(sub[1]) + " and " + line(sub[2])
		}
		return "line " + line(sub[1])
	})
}

// lintBodies is the static side of P11: bodies reach plugins only when some
// plugin in the chain declares reads_body, so a streaming plugin that does
// not declare it, in a chain where no other plugin does, sees no body.
func lintBodies(cf *ChainFile, dir gateway.Direction, entries []ChainEntry, c *Catalog, add func(path, plugin, rule, fix, format string, args ...any)) {
	reads := false
	var streamers []int
	for i, e := range entries {
		if e.OnError == string(pipeline.Off) {
			continue
		}
		d, ok := c.Lookup(e.Name)
		if !ok || d.Capabilities == nil {
			continue
		}
		if d.Capabilities.ReadsBody {
			reads = true
		}
		if slices.Contains(d.Behaviours, gateway.BehaviourStream) && !d.Capabilities.ReadsBody {
			streamers = append(streamers, i)
		}
	}
	if reads {
		return
	}
	for _, i := range streamers {
		add(fmt.Sprintf("$.%s[%d]", dir, i), entries[i].Name, "P11", "declare reads_body on the plugin, or add a plugin that reads bodies to the chain",
			"%s chain: plugin %q handles response frames but no plugin in the chain reads bodies, so it gets no body (nil)", dir, entries[i].Name)
	}
}

func validateExtensions(cf *ChainFile, c *Catalog, add func(path, plugin, rule, fix, format string, args ...any)) {
	type claim struct {
		plugin string
		line   int
	}
	owners := map[string]claim{}
	for i, e := range cf.Extensions {
		base := fmt.Sprintf("$.extensions[%d]", i)
		if e.Plugin == "" {
			add(base, "", "D5", "set plugin to the extension's plugin ID", "extension entry has no plugin ID; the dispatcher would skip it")
			continue
		}
		d, ok := c.Lookup(e.Plugin)
		if !ok || d.Extension == nil {
			add(base+".plugin", e.Plugin, RuleChainRef, suggest(e.Plugin, familyNames(c, family.Dispatch), "use the plugin ID of an agent extension in the catalog"), "%q is not an agent extension in the catalog (extensions: %s)", e.Plugin, listOrNone(familyNames(c, family.Dispatch)))
			continue
		}
		m := *d.Extension
		if e.Priority != nil {
			m.Priority = *e.Priority
			if m.Priority < intercept.MinPriority || m.Priority > intercept.MaxPriority {
				add(base+".priority", e.Plugin, "D4", fmt.Sprintf("set a priority between %d and %d", intercept.MinPriority, intercept.MaxPriority), "priority %d is out of bounds", m.Priority)
			}
		}
		if e.Timeout != "" {
			if t, err := time.ParseDuration(e.Timeout); err != nil || t < 0 {
				add(base+".timeout", e.Plugin, "D3", "write a non-negative Go duration such as 10s", "timeout %q is not a non-negative duration", e.Timeout)
			} else if t > intercept.MaxTimeout {
				add(base+".timeout", e.Plugin, "D3", "lower the timeout to at most 60s", "timeout %s is over the cap of %s and will be capped", t, intercept.MaxTimeout)
			}
		}
		slots, slotPath := m.Slots, base+".plugin"
		explicit := e.Slots != nil
		if explicit {
			slots = e.Slots
		}
		for j, s := range slots {
			p := slotPath
			if explicit {
				p = fmt.Sprintf("%s.slots[%d]", base, j)
			}
			sl, err := intercept.ParseSlot(s)
			if err != nil {
				add(p, e.Plugin, "D17", "use one of the slot names of D17", "%v", err)
				continue
			}
			key := sl.String()
			if prev, dup := owners[key]; dup && prev.plugin != e.Plugin {
				add(p, e.Plugin, "D18", fmt.Sprintf("keep one owner of slot %q: drop the claim of %q or of %q", key, prev.plugin, e.Plugin),
					"slot %q is claimed by %q (line %d) and by %q; a slot has at most one owner", key, prev.plugin, prev.line, e.Plugin)
				continue
			}
			if _, dup := owners[key]; !dup {
				owners[key] = claim{plugin: e.Plugin, line: cf.Line(p)}
			}
		}
	}
}

func validateHooks(cf *ChainFile, c *Catalog, add func(path, plugin, rule, fix, format string, args ...any)) {
	if err := hooks.Policy(cf.ToolPolicy).CheckTool(); err != nil {
		add("$.tool_policy", "", "H6", "set tool_policy to fail-open, fail-closed or swallow, or leave it out (fail-open)", "%v", err)
	}
	for i, h := range cf.Hooks {
		base := fmt.Sprintf("$.hooks[%d]", i)
		d, ok := c.Lookup(h.Plugin)
		if !ok || len(d.Hooks) == 0 {
			add(base+".plugin", h.Plugin, RuleChainRef, suggest(h.Plugin, familyNames(c, family.Hooks), "use the name of a hook plugin in the catalog"), "%q is not a hook plugin in the catalog (hook plugins: %s)", h.Plugin, listOrNone(familyNames(c, family.Hooks)))
			continue
		}
		if h.ID != "" && !slices.ContainsFunc(d.Hooks, func(s hooks.Spec) bool { return s.ID == h.ID }) {
			var ids []string
			for _, s := range d.Hooks {
				ids = append(ids, s.ID)
			}
			add(base+".id", h.Plugin, RuleChainRef, suggest(h.ID, ids, "use one of the plugin's hook IDs, or leave id out to enable them all"), "plugin %q serves no hook %q (hooks: %s)", h.Plugin, h.ID, listOrNone(ids))
		}
		if err := hooks.Policy(h.Policy).CheckHook(); err != nil {
			add(base+".policy", h.Plugin, "H3", "set policy to fail-open or fail-closed, or leave it out (fail-closed)", "%v", err)
		}
	}
}

// suggest prefixes fix with the name of names nearest to n when one is
// close enough to be a typo of it.
func suggest(n string, names []string, fix string) string {
	if near := DidYouMean(n, names); near != "" {
		return near + " " + fix
	}
	return fix
}

func familyNames(c *Catalog, fam string) []string {
	var out []string
	for _, d := range c.Plugins {
		if d.HasFamily(fam) && !slices.Contains(out, d.Name) {
			out = append(out, d.Name)
		}
	}
	return out
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Resolved is a chain file resolved against a catalog: what `abctl chain
// show` prints.
type Resolved struct {
	Mode       string              `json:"mode"`
	Chains     []ResolvedChain     `json:"chains"`
	Extensions []ResolvedExtension `json:"extensions,omitempty"`
	Hooks      []ResolvedHook      `json:"hooks,omitempty"`
	ToolPolicy string              `json:"tool_policy,omitempty"`
}

// ResolvedChain is one direction's chain.
type ResolvedChain struct {
	Direction string `json:"direction"`
	// BuffersBodies reports whether the host will hand bodies to plugins
	// (P11): some active entry reads bodies.
	BuffersBodies bool            `json:"buffers_bodies"`
	Entries       []ResolvedEntry `json:"entries"`
}

// ResolvedEntry is one chain entry with what the catalog knows of it.
type ResolvedEntry struct {
	// Entry numbers the entry in its direction's list in the chain file,
	// from 1, off entries included: the number errors use ("entry 3")
	// and abctl shows.
	Entry int `json:"entry"`
	// Position counts active entries from 1 (the order they run in); off
	// entries have 0.
	Position     int           `json:"position"`
	Line         int           `json:"line"`
	Name         string        `json:"name"`
	OnError      string        `json:"on_error"`
	Known        bool          `json:"known"`
	Capabilities *Capabilities `json:"capabilities,omitempty"`
	Config       any           `json:"config,omitempty"`
	Deps         []ResolvedDep `json:"deps,omitempty"`
	Behaviours   []string      `json:"behaviours,omitempty"`
}

// Dependency states.
const (
	DepSatisfied = "satisfied"
	DepMissing   = "missing"
	DepLate      = "late"
)

// ResolvedDep is one dependency of an entry and whether the chain meets it.
type ResolvedDep struct {
	Name string `json:"name"`
	// Kind is requires or requires_any.
	Kind   string `json:"kind"`
	Status string `json:"status"`
}

// ResolvedExtension is an enabled extension with its effective manifest.
// Required is the effective class (D12): set by the manifest or the chain
// file, or by owning a slot.
type ResolvedExtension struct {
	Plugin   string   `json:"plugin"`
	Known    bool     `json:"known"`
	Priority int      `json:"priority"`
	Required bool     `json:"required"`
	Slots    []string `json:"slots,omitempty"`
	Points   []string `json:"points,omitempty"`
}

// ResolvedHook is one enabled hook with its effective order and policy, in
// bus order (H1).
type ResolvedHook struct {
	Plugin string `json:"plugin"`
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Order  int    `json:"order"`
	Policy string `json:"policy"`
}

// Resolve resolves cf against c: each direction's active entries in order
// with capabilities and dependency status, the extensions in dispatch order
// (D4: priority, then plugin ID), and the hooks in bus order (H1).
func Resolve(cf *ChainFile, c *Catalog) Resolved {
	r := Resolved{Mode: cmp.Or(cf.Mode, string(pipeline.Proxy)), ToolPolicy: cf.ToolPolicy}
	for _, dir := range []gateway.Direction{gateway.Inbound, gateway.Outbound} {
		entries := cf.Direction(dir)
		if len(entries) == 0 {
			continue
		}
		rc := ResolvedChain{Direction: dir.String()}
		pos := map[string]int{}
		n := 0
		for _, e := range entries {
			if e.OnError != string(pipeline.Off) {
				n++
				if _, ok := pos[e.Name]; !ok {
					pos[e.Name] = n
				}
			}
		}
		n = 0
		for i, e := range entries {
			re := ResolvedEntry{Entry: i + 1, Name: e.Name, OnError: cmp.Or(e.OnError, string(pipeline.Enforce)), Config: e.Config, Line: cf.Line(fmt.Sprintf("$.%s[%d]", dir, i))}
			if e.OnError != string(pipeline.Off) {
				n++
				re.Position = n
			}
			if d, ok := c.Lookup(e.Name); ok && d.Capabilities != nil {
				re.Known = true
				re.Capabilities = d.Capabilities
				re.Behaviours = d.Behaviours
				if re.Position > 0 && d.Capabilities.ReadsBody {
					rc.BuffersBodies = true
				}
				for _, dep := range d.Capabilities.Requires {
					re.Deps = append(re.Deps, ResolvedDep{Name: dep, Kind: "requires", Status: depStatus(pos, dep, re.Position)})
				}
				for _, dep := range d.Capabilities.RequiresAny {
					re.Deps = append(re.Deps, ResolvedDep{Name: dep, Kind: "requires_any", Status: depStatus(pos, dep, re.Position)})
				}
			}
			rc.Entries = append(rc.Entries, re)
		}
		r.Chains = append(r.Chains, rc)
	}
	for _, e := range cf.Extensions {
		rx := ResolvedExtension{Plugin: e.Plugin}
		if d, ok := c.Lookup(e.Plugin); ok && d.Extension != nil {
			rx.Known = true
			rx.Priority, rx.Required, rx.Slots, rx.Points = d.Extension.Priority, d.Extension.Required, d.Extension.Slots, d.Extension.Points
		}
		if e.Priority != nil {
			rx.Priority = *e.Priority
		}
		if e.Required != nil {
			rx.Required = *e.Required
		}
		if e.Slots != nil {
			rx.Slots = e.Slots
		}
		// D12: owning any slot makes an extension required-class.
		rx.Required = rx.Required || len(rx.Slots) > 0
		r.Extensions = append(r.Extensions, rx)
	}
	slices.SortStableFunc(r.Extensions, func(a, b ResolvedExtension) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Plugin, b.Plugin))
	})
	for _, h := range cf.Hooks {
		d, ok := c.Lookup(h.Plugin)
		if !ok {
			continue
		}
		for _, s := range d.Hooks {
			if h.ID != "" && s.ID != h.ID {
				continue
			}
			rh := ResolvedHook{Plugin: h.Plugin, ID: s.ID, Kind: string(s.Kind), Order: s.Order, Policy: string(s.Policy)}
			if h.Order != nil {
				rh.Order = *h.Order
			}
			if h.Policy != "" {
				rh.Policy = h.Policy
			}
			if rh.Policy == "" {
				// H3: an unspecified hook policy is fail-closed; a tool
				// reactor's falls to the bus tool policy, fail-open by
				// default (H6).
				rh.Policy = string(hooks.PolicyFailClosed)
				if s.Kind == hooks.KindTool {
					rh.Policy = cmp.Or(cf.ToolPolicy, string(hooks.PolicyFailOpen))
				}
			}
			r.Hooks = append(r.Hooks, rh)
		}
	}
	slices.SortStableFunc(r.Hooks, func(a, b ResolvedHook) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.ID, b.ID))
	})
	return r
}

func depStatus(pos map[string]int, dep string, at int) string {
	p, ok := pos[dep]
	switch {
	case !ok:
		return DepMissing
	case at == 0 || p < at:
		return DepSatisfied
	}
	return DepLate
}

// EntryPos returns the line and column of entry i of a direction in the
// file (0, 0 when unknown), for reporting a build error of that entry; a
// negative i gives the direction's list.
func (cf *ChainFile) EntryPos(dir gateway.Direction, i int) (line, col int) {
	path := fmt.Sprintf("$.%s[%d]", dir, i)
	if i < 0 {
		path = "$." + dir.String()
	}
	at := cf.pos.at(path)
	return at.line, at.col
}
