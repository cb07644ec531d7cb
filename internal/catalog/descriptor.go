// Package catalog describes plugins: what each one is called, does, needs
// and claims, and where it came from. A [Catalog] is loaded from one or more
// sources (built-in, a directory of plugin binaries, a catalog file, a
// gateway's plugin endpoint), linted against the contract rules that can be
// checked without traffic ([Lint]), and used to validate chain files
// ([ValidateChain]).
//
// The JSON form of a [Descriptor] is stable: fields are only ever added. It
// is what `abctl catalog list -o json` prints and what a `file:` source reads.
// See docs/catalog.md.
package catalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/abkit/abkit/internal/probe"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
)

// Origin kinds.
const (
	OriginBuiltin = "builtin"
	OriginBinary  = "binary"
	OriginFile    = "file"
	OriginURL     = "url"
)

// Descriptor is everything the catalog knows about one plugin.
type Descriptor struct {
	// Name is the registered name chain entries refer to (P1).
	Name string `json:"name"`
	// Description is the one-line operator description (P5).
	Description string `json:"description"`
	Version     string `json:"version,omitempty"`
	// Families lists the contract families the plugin implements: P, D, H.
	Families []string `json:"families"`
	// Capabilities are the family P capabilities, normalised (P3, P4). Nil
	// when the plugin is not a pipeline plugin.
	Capabilities *Capabilities `json:"capabilities,omitempty"`
	// Behaviours are the optional pipeline behaviours the plugin implements,
	// sorted: finish, init, ready, shutdown, stream.
	Behaviours []string `json:"behaviours,omitempty"`
	// Config is the configuration schema; nil means the plugin takes no
	// configuration (P6).
	Config *gateway.ConfigSchema `json:"config,omitempty"`
	// Extension is the family D manifest: points, slot claims, priority.
	Extension *Extension `json:"extension,omitempty"`
	// Hooks are the family H hooks the plugin serves.
	Hooks []hooks.Spec `json:"hooks,omitempty"`
	// Live lists where a gateway runs the plugin (url: sources reading a
	// live-chain endpoint).
	Live []LiveEntry `json:"live,omitempty"`
	// Origin says where the descriptor came from.
	Origin Origin `json:"origin"`

	// Observed holds the capabilities each probed instance reported, for
	// the P2 check; empty when the source cannot instantiate the plugin.
	Observed []probe.Observed `json:"-"`
}

// Capabilities are a pipeline plugin's static capabilities (P3) after
// normalisation (P4). The description lives on the [Descriptor].
type Capabilities struct {
	ReadsBody          bool     `json:"reads_body"`
	WritesRequestBody  bool     `json:"writes_request_body"`
	WritesResponseBody bool     `json:"writes_response_body"`
	Requires           []string `json:"requires,omitempty"`
	RequiresAny        []string `json:"requires_any,omitempty"`
	// Extensions are the exchange extensions the plugin declares it writes
	// and reads, with their schemas (X1, X2).
	Extensions []gateway.ExtensionSpec `json:"extensions,omitempty"`
}

// BodyWords names what c does with bodies, in the short words the CLI's
// and the TUI's tables use: reads, writes-req, writes-resp; none is empty.
func (c *Capabilities) BodyWords() []string { return c.body(false) }

// BodyPhrases names what c does with bodies in words, as the TUI's
// catalog pane shows it: reads body, writes request body, writes response
// body; none is empty.
func (c *Capabilities) BodyPhrases() []string { return c.body(true) }

// body is BodyWords, or with long set BodyPhrases: one list of the three
// body capabilities for both.
func (c *Capabilities) body(long bool) []string {
	var out []string
	for _, b := range []struct {
		on          bool
		short, long string
	}{
		{c.ReadsBody, "reads", "reads body"},
		{c.WritesRequestBody, "writes-req", "writes request body"},
		{c.WritesResponseBody, "writes-resp", "writes response body"},
	} {
		switch {
		case !b.on:
		case long:
			out = append(out, b.long)
		default:
			out = append(out, b.short)
		}
	}
	return out
}

// FromGateway returns the normalised (P4) catalog form of c.
func FromGateway(c gateway.Capabilities) *Capabilities {
	c = c.Normalize()
	return &Capabilities{
		ReadsBody:          c.ReadsBody,
		WritesRequestBody:  c.WritesRequestBody,
		WritesResponseBody: c.WritesResponseBody,
		Requires:           c.Requires,
		RequiresAny:        c.RequiresAny,
		Extensions:         c.Extensions,
	}
}

// Gateway returns c as sdk capabilities with description d.
func (c *Capabilities) Gateway(d string) gateway.Capabilities {
	if c == nil {
		return gateway.Capabilities{Description: d}
	}
	return gateway.Capabilities{
		ReadsBody:          c.ReadsBody,
		WritesRequestBody:  c.WritesRequestBody,
		WritesResponseBody: c.WritesResponseBody,
		Requires:           slices.Clone(c.Requires),
		RequiresAny:        slices.Clone(c.RequiresAny),
		Extensions:         gateway.Capabilities{Extensions: c.Extensions}.Normalize().Extensions,
		Description:        d,
	}
}

// ExtensionLines describes each declared extension in one line, for the
// catalog's show command and pane: "writes inference (schema: object)",
// "reads mcp (optional)", then the description.
func ExtensionLines(specs []gateway.ExtensionSpec) []string {
	var out []string
	for _, s := range specs {
		var verb []string
		if s.Writes {
			verb = append(verb, "writes")
		}
		if s.Reads {
			verb = append(verb, "reads")
		}
		if len(verb) == 0 {
			verb = append(verb, "declares")
		}
		line := strings.Join(verb, "+") + " " + s.Key
		var notes []string
		if s.Reads && s.Optional {
			notes = append(notes, "optional")
		}
		if len(s.Schema) > 0 {
			notes = append(notes, "schema: "+schemaSummary(s.Schema))
		}
		if len(notes) > 0 {
			line += " (" + strings.Join(notes, ", ") + ")"
		}
		if s.Description != "" {
			line += ": " + s.Description
		}
		out = append(out, line)
	}
	return out
}

// schemaSummaryKeys is how many property names a summary lists.
const schemaSummaryKeys = 4

// schemaSummary is a schema's type and top-level properties, such as
// "object{model, stream}" (the first few, sorted); the whole schema is in the JSON output.
func schemaSummary(raw json.RawMessage) string {
	var s struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return "not JSON"
	}
	t := "any"
	switch v := s.Type.(type) {
	case string:
		t = v
	case []any:
		var ts []string
		for _, x := range v {
			ts = append(ts, fmt.Sprint(x))
		}
		t = strings.Join(ts, "|")
	}
	if len(s.Properties) > 0 {
		keys := slices.Sorted(maps.Keys(s.Properties))
		if len(keys) > schemaSummaryKeys {
			keys = append(keys[:schemaSummaryKeys], "…")
		}
		t += "{" + strings.Join(keys, ", ") + "}"
	}
	return t
}

// normalize applies P4 in place.
func (c *Capabilities) normalize() {
	if c != nil && (c.WritesRequestBody || c.WritesResponseBody) {
		c.ReadsBody = true
	}
}

// Extension is the family D part of a descriptor: an agent extension's
// manifest as the catalog shows it.
type Extension struct {
	// Points are the interception points the extension joins (D1).
	Points []string `json:"points,omitempty"`
	// Slots are the slots the extension claims (D17, D18).
	Slots []string `json:"slots,omitempty"`
	// Priority orders the chain ascending, -1000…1000 (D4).
	Priority int `json:"priority,omitempty"`
	// Required makes the extension required-class (D12).
	Required bool `json:"required,omitempty"`
	// Timeout is the per-call budget override as a Go duration string (D3).
	Timeout string `json:"timeout,omitempty"`
}

// LiveEntry is one place a gateway runs a plugin.
type LiveEntry struct {
	Direction string         `json:"direction"`
	Position  int            `json:"position"`
	Config    map[string]any `json:"config,omitempty"`
}

// Origin says where a descriptor came from.
type Origin struct {
	// Kind is builtin, binary, file or url.
	Kind string `json:"kind"`
	// Source is the source spec the descriptor was loaded through, such as
	// "dir:./plugins".
	Source string `json:"source"`
	// Path is the binary or catalog file path.
	Path string `json:"path,omitempty"`
	// SHA256 is the hex content hash of a binary (of a manifest: the
	// manifest's).
	SHA256 string `json:"sha256,omitempty"`
	// Argv is the command line of a plugin found through a manifest
	// (NAME.abkit.json, Path): the program and its arguments. Dir is the
	// working directory it runs in. Both are empty for a binary, which
	// runs as Path.
	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	// URL is the gateway endpoint.
	URL string `json:"url,omitempty"`
}

// String returns a short human form of o: "builtin", the path, or the URL.
func (o Origin) String() string {
	switch o.Kind {
	case OriginBinary, OriginFile:
		return o.Path
	case OriginURL:
		return o.URL
	}
	return o.Kind
}

// Command is the command line that starts the plugin of a binary origin:
// the manifest's, or the binary alone.
func (o Origin) Command() Command {
	if len(o.Argv) > 0 {
		return Command{Argv: slices.Clone(o.Argv), Dir: o.Dir}
	}
	return Command{Argv: []string{o.Path}}
}

// HasFamily reports whether d implements family f.
func (d *Descriptor) HasFamily(f string) bool { return slices.Contains(d.Families, f) }

// clone returns a deep enough copy of d that callers may change slices
// without touching the catalog's copy.
func (d Descriptor) clone() Descriptor {
	d.Families = slices.Clone(d.Families)
	d.Origin.Argv = slices.Clone(d.Origin.Argv)
	d.Behaviours = slices.Clone(d.Behaviours)
	if d.Capabilities != nil {
		c := *d.Capabilities
		c.Requires = slices.Clone(c.Requires)
		c.RequiresAny = slices.Clone(c.RequiresAny)
		d.Capabilities = &c
	}
	if d.Extension != nil {
		e := *d.Extension
		e.Points = slices.Clone(e.Points)
		e.Slots = slices.Clone(e.Slots)
		d.Extension = &e
	}
	d.Hooks = slices.Clone(d.Hooks)
	d.Live = slices.Clone(d.Live)
	d.Observed = slices.Clone(d.Observed)
	return d
}

// finish fills derived fields: families from the parts present, sorted
// behaviours, normalised capabilities.
func (d *Descriptor) finish() {
	d.Capabilities.normalize()
	fam := family.Of(d.Capabilities != nil || d.Config != nil || slices.Contains(d.Families, family.Pipeline),
		d.Extension != nil || slices.Contains(d.Families, family.Dispatch),
		len(d.Hooks) > 0 || slices.Contains(d.Families, family.Hooks))
	for _, f := range d.Families {
		if !slices.Contains(fam, f) {
			fam = append(fam, f) // unknown families are kept so lint can report them
		}
	}
	d.Families = fam
	if fam == nil {
		d.Families = []string{}
	}
	slices.Sort(d.Behaviours)
	d.Behaviours = slices.Compact(d.Behaviours)
}

// ConfigLines describes configuration fields one a line, as `abctl catalog
// show` and the TUI's catalog tab print them: "NAME TYPE", then
// " required", " default=V", " enum=A|B" and " — DESCRIPTION" where they
// apply. Nested fields follow their parent under its dotted name.
func ConfigLines(fields []gateway.Field) []string { return configLines("", fields) }

func configLines(prefix string, fields []gateway.Field) []string {
	var out []string
	for _, f := range fields {
		var b strings.Builder
		fmt.Fprintf(&b, "%s%s %s", prefix, f.Name, f.Type)
		if f.Required {
			b.WriteString(" required")
		}
		if f.Default != nil {
			fmt.Fprintf(&b, " default=%v", f.Default)
		}
		if len(f.Enum) > 0 {
			fmt.Fprintf(&b, " enum=%s", strings.Join(f.Enum, "|"))
		}
		if r := RangeText(f); r != "" {
			fmt.Fprintf(&b, " range=%s", r)
		}
		if f.Description != "" {
			fmt.Fprintf(&b, " — %s", f.Description)
		}
		out = append(out, b.String())
		out = append(out, configLines(prefix+f.Name+".", f.Fields)...)
	}
	return out
}

// Detail is one entry of a descriptor's detail view: a key and its value,
// or, when List is set, a key over several lines (Lines: one config field
// a line).
type Detail struct {
	Key, Value string
	List       bool
	Lines      []string
}

// Details are the entries `abctl catalog show` and the TUI's catalog pane
// both show after a plugin's capabilities, in order: its configuration
// schema, its extension manifest (family D), its hooks (family H) and its
// positions in a live chain. sep joins the values of a list field (points,
// slots); each front end formats the entries its own way.
func Details(d *Descriptor, sep string) []Detail {
	var out []Detail
	add := func(k, v string) { out = append(out, Detail{Key: k, Value: v}) }
	if d.Config != nil {
		out = append(out, Detail{Key: "config", List: true, Lines: ConfigLines(d.Config.Fields)})
	} else if d.HasFamily(family.Pipeline) {
		add("config", "none (takes no configuration)")
	}
	if e := d.Extension; e != nil {
		add("points", strings.Join(e.Points, sep))
		add("slots", strings.Join(e.Slots, sep))
		add("priority", strconv.Itoa(e.Priority))
		add("required", strconv.FormatBool(e.Required))
		if e.Timeout != "" {
			add("timeout", e.Timeout)
		}
	}
	for _, h := range d.Hooks {
		add("hook", fmt.Sprintf("%s kind=%s order=%d policy=%s", h.ID, h.Kind, h.Order, cmp.Or(string(h.Policy), "unspecified")))
	}
	for _, l := range d.Live {
		add("live", fmt.Sprintf("%s #%d", l.Direction, l.Position))
	}
	return out
}
