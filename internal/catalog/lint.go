package catalog

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/extschema"
	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// Finding is one broken rule: which plugin, which rule, what is wrong and
// how to fix it. File, Line and Column are set for chain-file findings.
type Finding struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Column is the 1-based column of the offending key or entry.
	Column int    `json:"column,omitempty"`
	Rule   string `json:"rule"`
	Plugin string `json:"plugin,omitempty"`
	Msg    string `json:"msg"`
	Fix    string `json:"fix"`
}

// Where returns FILE:LINE:COLUMN, FILE:LINE or FILE, as far as they are
// known, or "" for a finding about no file.
func (f Finding) Where() string {
	if f.File == "" {
		return ""
	}
	switch {
	case f.Line > 0 && f.Column > 0:
		return fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column)
	case f.Line > 0:
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}

func (f Finding) String() string {
	var b strings.Builder
	if w := f.Where(); w != "" {
		b.WriteString(w)
		b.WriteString(": ")
	}
	b.WriteString(f.Rule)
	if f.Plugin != "" {
		fmt.Fprintf(&b, " %s", f.Plugin)
	}
	fmt.Fprintf(&b, ": %s", f.Msg)
	if f.Fix != "" {
		fmt.Fprintf(&b, "; fix: %s", f.Fix)
	}
	return b.String()
}

// SortFindings orders findings by file, line, plugin, rule and message, so
// output is stable.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column),
			cmp.Compare(a.Plugin, b.Plugin),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
}

// RuleSchema is the project's rule for configuration schemas: known field
// types, enum values and defaults of the field's type, nested fields only on
// object and array fields, unique non-empty field names.
const RuleSchema = "C1"

// Lint checks every descriptor of c against the rules that need no traffic:
// unique names (P1), static capabilities across instances (P2), the
// description (P5), requires and requires_any naming plugins in the
// catalog (P7, P8), slot names (D17), extension points, budget and priority
// (D1, D3, D4), hook specs (H1, H3) and config schemas (C1). It returns the
// findings sorted.
func Lint(c *Catalog) []Finding {
	var out []Finding
	add := func(plugin, rule, fix, format string, args ...any) {
		out = append(out, Finding{Plugin: plugin, Rule: rule, Msg: fmt.Sprintf(format, args...), Fix: fix})
	}
	names := map[string]bool{}
	for _, d := range c.Plugins {
		names[d.Name] = true
	}
	for i, d := range c.Plugins {
		// P1: names.
		if d.Name == "" {
			add("", "P1", "give the plugin a non-empty name; chain entries refer to plugins by it", "a plugin from %s has an empty name", d.Origin)
		}
		if i > 0 && c.Plugins[i-1].Name == d.Name && d.Name != "" {
			prev := c.Plugins[i-1]
			add(d.Name, "P1", "rename one of them, or drop one source",
				"name %q is provided twice: by %s (%s) and by %s (%s)", d.Name, prev.Origin.Source, prev.Origin, d.Origin.Source, d.Origin)
		}
		// P2: what instances report.
		lintObserved(d, add)
		// P5.
		if err := gateway.CheckDescription(d.Description); err != nil {
			add(d.Name, "P5", "write one line of at most 80 characters saying what the plugin does", "%v", err)
		}
		// P7, P8: dependencies name plugins in the catalog.
		if caps := d.Capabilities; caps != nil {
			for _, r := range caps.Requires {
				switch {
				case r == d.Name:
					add(d.Name, "P7", "remove the plugin's own name from requires", "requires names the plugin itself, which can never stand earlier in a chain")
				case !names[r]:
					add(d.Name, "P7", "fix the name, or add a source that provides "+strconv.Quote(r), "requires %q, which is not in the catalog (%s)", r, nearest(r, names))
				}
			}
			for _, r := range caps.RequiresAny {
				if !names[r] {
					add(d.Name, "P8", "fix the name, or add a source that provides "+strconv.Quote(r), "requires_any names %q, which is not in the catalog (%s)", r, nearest(r, names))
				}
			}
			// X1: declared extension schemas compile.
			for _, s := range caps.Extensions {
				if s.Key == "" {
					add(d.Name, "X1", "give every declared extension its key", "an extension declaration has an empty key")
				}
				if _, err := extschema.Compile(d.Name, s.Key, s.Schema); err != nil {
					add(d.Name, "X1", "fix the schema in the plugin's Capabilities().Extensions", "%v", err)
				}
			}
		}
		// Family D.
		if e := d.Extension; e != nil {
			for _, s := range e.Slots {
				if _, err := intercept.ParseSlot(s); err != nil {
					add(d.Name, "D17", "use one of the slot names of D17", "%v", err)
				}
			}
			for _, p := range e.Points {
				if !intercept.Point(p).Valid() {
					add(d.Name, "D1", "use one of the interception points of D1", "unknown interception point %q", p)
				}
			}
			if e.Priority < intercept.MinPriority || e.Priority > intercept.MaxPriority {
				add(d.Name, "D4", fmt.Sprintf("set a priority between %d and %d", intercept.MinPriority, intercept.MaxPriority), "priority %d is out of bounds", e.Priority)
			}
			if e.Timeout != "" {
				if t, err := time.ParseDuration(e.Timeout); err != nil || t < 0 {
					add(d.Name, "D3", "write a non-negative Go duration such as 10s", "timeout %q is not a non-negative duration", e.Timeout)
				} else if t > intercept.MaxTimeout {
					add(d.Name, "D3", "lower the timeout to at most 60s", "timeout %s is over the cap of %s and will be capped", t, intercept.MaxTimeout)
				}
			}
		}
		// Family H.
		for _, h := range d.Hooks {
			if h.ID == "" {
				add(d.Name, "H1", "give the hook a stable ID; it breaks order ties and names the hook in errors", "a %s hook has an empty id", h.Kind)
			}
			if err := h.Kind.Check(); err != nil {
				add(d.Name, "H1", fmt.Sprintf("use one of %s, %s, %s, %s", hooks.KindSubmit, hooks.KindRequestPart, hooks.KindResponsePart, hooks.KindTool), "hook %q: %v", h.ID, err)
			}
			if err := h.Policy.CheckHook(); err != nil {
				add(d.Name, "H3", "declare fail-open or fail-closed, or leave it empty for fail-closed", "hook %q: %v", h.ID, err)
			}
		}
		// C1: config schema.
		if d.Config != nil {
			lintFields(d.Name, "config", d.Config.Fields, add)
		}
	}
	SortFindings(out)
	return out
}

type addFunc func(plugin, rule, fix, format string, args ...any)

func lintObserved(d Descriptor, add addFunc) {
	if d.Origin.Kind == OriginBuiltin && d.HasFamily(family.Pipeline) && len(d.Observed) == 0 {
		add(d.Name, "P2", "make the factory accept an empty config, or give every required field a default", "could not make an instance to check that capabilities are static")
		return
	}
	for i, o := range d.Observed {
		if o.Name != d.Name {
			add(d.Name, "P2", "return the registered name from Name()", "instance %d reports name %q, not its registered name %q", i+1, o.Name, d.Name)
		}
		if d.Capabilities != nil && !o.Capabilities.Normalize().Equal(d.Capabilities.Gateway(d.Description)) {
			add(d.Name, "P2", "make Capabilities() return the same value on every instance; register a plugin that behaves differently under another name",
				"instance %d reports capabilities %s, unlike %s", i+1, capsString(o.Capabilities.Normalize()), capsString(d.Capabilities.Gateway(d.Description)))
		}
	}
}

func capsString(c gateway.Capabilities) string {
	return fmt.Sprintf("{reads_body:%t writes_request_body:%t writes_response_body:%t requires:%v requires_any:%v description:%q}",
		c.ReadsBody, c.WritesRequestBody, c.WritesResponseBody, c.Requires, c.RequiresAny, c.Description)
}

// DidYouMean returns `did you mean "NAME"?` for the name of names nearest
// to n when it is close enough to be a typo, and "" otherwise.
func DidYouMean(n string, names []string) string {
	set := make(map[string]bool, len(names))
	for _, m := range names {
		set[m] = true
	}
	if s := nearest(n, set); s != "no similar name" {
		return s
	}
	return ""
}

// nearest says which catalog name is closest to n, to catch typos.
func nearest(n string, names map[string]bool) string {
	best, bestD := "", math.MaxInt
	for m := range names {
		if d := editDistance(n, m); d < bestD || (d == bestD && m < best) {
			best, bestD = m, d
		}
	}
	if best == "" || bestD > max(2, len(n)/3) {
		return "no similar name"
	}
	return fmt.Sprintf("did you mean %q?", best)
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// FieldTypes are the configuration field types a schema may use.
var FieldTypes = []string{"string", "integer", "number", "boolean", "array", "object", "duration"}

func lintFields(plugin, path string, fields []gateway.Field, add addFunc) {
	seen := map[string]bool{}
	for i, f := range fields {
		where := fmt.Sprintf("%s.%s", path, f.Name)
		if f.Name == "" {
			where = fmt.Sprintf("%s[%d]", path, i)
			add(plugin, RuleSchema, "name the field", "%s has an empty name", where)
		} else if seen[f.Name] {
			add(plugin, RuleSchema, "remove or rename one of them", "%s is declared twice", where)
		}
		seen[f.Name] = true
		if !slices.Contains(FieldTypes, f.Type) {
			add(plugin, RuleSchema, "use one of "+strings.Join(FieldTypes, ", "), "%s has unknown type %q", where, f.Type)
			continue
		}
		if len(f.Fields) > 0 && f.Type != "object" && f.Type != "array" {
			add(plugin, RuleSchema, "make the field an object or array, or drop its nested fields", "%s is of type %s but has nested fields; only object and array fields have them", where, f.Type)
		}
		// An enum lists the allowed values; on an array field, the allowed
		// values of its items, which are then strings.
		itemType := f.Type
		if f.Type == "array" {
			itemType = "string"
		}
		if len(f.Enum) > 0 {
			if f.Type == "object" || f.Type == "boolean" || (f.Type == "array" && len(f.Fields) > 0) {
				add(plugin, RuleSchema, "drop the enum, or change the type", "%s has an enum, which %s field cannot have", where, article(f.Type))
			} else {
				seenEnum := map[string]bool{}
				for _, v := range f.Enum {
					if err := checkScalar(itemType, v); err != nil {
						add(plugin, RuleSchema, "write enum values of the field's type", "%s enum value %q: %v", where, v, err)
					}
					if seenEnum[v] {
						add(plugin, RuleSchema, "list each enum value once", "%s enum value %q appears twice", where, v)
					}
					seenEnum[v] = true
				}
			}
		}
		numeric := f.Type == "integer" || f.Type == "number"
		switch {
		case (f.Minimum != nil || f.Maximum != nil) && !numeric:
			add(plugin, RuleSchema, "drop minimum and maximum, or make the field an integer or number", "%s has bounds, which %s field cannot have", where, article(f.Type))
		case f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum:
			add(plugin, RuleSchema, "make minimum at most maximum", "%s has minimum %v above its maximum %v", where, *f.Minimum, *f.Maximum)
		}
		if numeric && f.Default != nil && checkDefault(f.Type, f.Default) == nil {
			if n, ok := numberOf(f.Default); ok && (f.Minimum != nil && n < *f.Minimum || f.Maximum != nil && n > *f.Maximum) {
				add(plugin, RuleSchema, "make the default a value within the bounds", "%s default %v is out of range %s", where, f.Default, RangeText(f))
			}
		}
		if f.Default != nil {
			if err := checkDefault(f.Type, f.Default); err != nil {
				add(plugin, RuleSchema, "make the default a value of the field's type", "%s default %v: %v", where, f.Default, err)
			} else if len(f.Enum) > 0 {
				for _, v := range enumCandidates(f.Type, f.Default) {
					if !slices.Contains(f.Enum, v) {
						add(plugin, RuleSchema, "make the default one of the enum values", "%s default %v: %q is not one of the enum values %v", where, f.Default, v, f.Enum)
					}
				}
			}
		}
		if len(f.Fields) > 0 {
			lintFields(plugin, where, f.Fields, add)
		}
	}
}

// checkScalar reports whether the enum string s is a value of type t.
func checkScalar(t, s string) error {
	var err error
	switch t {
	case "integer":
		_, err = strconv.ParseInt(s, 10, 64)
	case "number":
		_, err = strconv.ParseFloat(s, 64)
	case "duration":
		_, err = time.ParseDuration(s)
	}
	if err != nil {
		return fmt.Errorf("not %s", article(t))
	}
	return nil
}

func article(t string) string {
	if strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + t
	}
	return "a " + t
}

// checkDefault reports whether a decoded default v is a value of type t.
func checkDefault(t string, v any) error {
	rv := reflect.ValueOf(v)
	k := rv.Kind()
	ok := false
	switch t {
	case "string":
		ok = k == reflect.String
	case "duration":
		if k == reflect.String {
			if _, err := time.ParseDuration(rv.String()); err != nil {
				return fmt.Errorf("not a duration such as 10s")
			}
			ok = true
		}
	case "boolean":
		ok = k == reflect.Bool
	case "integer":
		n, isNum := numberOf(v)
		ok = isNum && IsInteger(n)
	case "number":
		_, ok = numberOf(v)
	case "array":
		ok = k == reflect.Slice || k == reflect.Array
	case "object":
		ok = k == reflect.Map
	}
	if !ok {
		return fmt.Errorf("not %s", article(t))
	}
	return nil
}

// enumCandidates returns the values of a default that must be enum values:
// the default itself, or each item of an array default.
func enumCandidates(t string, v any) []string {
	if t != "array" {
		return []string{scalarString(v)}
	}
	rv := reflect.ValueOf(v)
	out := make([]string, 0, rv.Len())
	for i := range rv.Len() {
		out = append(out, scalarString(rv.Index(i).Interface()))
	}
	return out
}

// scalarString formats a scalar default the way enum values are written.
func scalarString(v any) string {
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return strconv.FormatInt(rv.Int(), 10)
	case rv.CanUint():
		return strconv.FormatUint(rv.Uint(), 10)
	case rv.CanFloat():
		return strconv.FormatFloat(rv.Float(), 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
