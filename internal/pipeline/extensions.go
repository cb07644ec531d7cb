package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/abkit/abkit/internal/extschema"
	"github.com/abkit/abkit/internal/redact"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

// Typed extensions (docs/contracts.md, X1 and X2): a plugin declares the
// extensions it writes and reads in Capabilities.Extensions. The rules are
// abkit's own (the source has untyped extensions), so none of them refuses
// a build: Validate reports them as warnings, and at traffic time a value
// that breaks its writer's schema is refused and reported.

// validateExtensions adds the static findings about declared extensions:
// a reader with no writer before it (X2), and two writers of one key that
// declare different schemas (X1).
func validateExtensions(act []active, warn func(idx int, plugin, rule, fix, format string, args ...any)) {
	for k, a := range knownEntries(act) {
		name, caps := a.entry.Plugin, a.info.Capabilities
		for _, s := range caps.Extensions {
			switch {
			case s.Writes:
				for j := range k {
					w, ok := act[j].info.Capabilities.Writer(s.Key)
					if !act[j].known || !ok || len(w.Schema) == 0 || len(s.Schema) == 0 || sameJSON(w.Schema, s.Schema) {
						continue
					}
					warn(a.idx, name, "X1", "make the writers agree on one schema, or keep one of them in the chain",
						"plugins %q (entry %d) and %q (entry %d) both write extension %q with different schemas; readers cannot count on its shape",
						act[j].entry.Plugin, act[j].idx+1, name, a.idx+1, s.Key)
					break
				}
			case s.Reads && !s.Optional:
				if _, self := caps.Writer(s.Key); self {
					continue
				}
				before, unknown := false, false
				for j := range k {
					if !act[j].known {
						unknown = true
					} else if _, ok := act[j].info.Capabilities.Writer(s.Key); ok {
						before = true
					}
				}
				if before || unknown {
					continue // written earlier, or an earlier plugin may write it
				}
				late := ""
				for j := k + 1; j < len(act); j++ {
					if _, ok := act[j].info.Capabilities.Writer(s.Key); act[j].known && ok {
						late = fmt.Sprintf("; %q (entry %d) writes it, but stands after it", act[j].entry.Plugin, act[j].idx+1)
						break
					}
				}
				fix := fmt.Sprintf("put a plugin that writes %q before %q", s.Key, name)
				if late != "" {
					fix = fmt.Sprintf("move the writer of %q before %q", s.Key, name)
				}
				warn(a.idx, name, "X2", fix, "plugin %q reads extension %q, which no plugin before it writes%s", name, s.Key, late)
			}
		}
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// compileExtensions compiles the schemas of the extensions a plugin writes.
// A schema that does not compile is a warning (X1) and leaves that key
// unchecked. declares reports whether the plugin declared any extension.
func compileExtensions(plugin string, entry int, caps gateway.Capabilities, warnings *[]*RuleError) (map[string]*extschema.Schema, bool) {
	var out map[string]*extschema.Schema
	for _, s := range caps.Extensions {
		if !s.Writes || len(s.Schema) == 0 {
			continue
		}
		sc, err := extschema.Compile(plugin, s.Key, s.Schema)
		if err != nil {
			*warnings = append(*warnings, &RuleError{Plugin: plugin, Rule: "X1", Entry: entry, Warning: true,
				Msg: fmt.Sprintf("%v; its values are not checked", err), Fix: "fix the schema in the plugin's Capabilities().Extensions"})
			continue
		}
		if out == nil {
			out = make(map[string]*extschema.Schema)
		}
		out[s.Key] = sc
	}
	return out, len(caps.Extensions) > 0
}

// noteExtensions checks the extensions plugin pl changed in its last call:
// a value that breaks the schema pl declares for its key is refused (the
// key gets back its previous value) and reported with the plugin and key
// (X1); a key a declaring plugin writes without declaring it is reported.
// With tracing on it keeps each change for the call's trace event.
func (e *Exchange) noteExtensions(pl *plug) {
	chs := e.ctl.TakeExtensionChanges()
	for _, ch := range chs {
		v, ok := e.gx.Extension(ch.Key)
		refused := ""
		var dec extschema.Decoded // once for the schema and the trace
		if s := pl.ext[ch.Key]; ok && (s != nil || e.rec != nil) {
			dec = extschema.Decode(v)
		}
		if ok {
			if s := pl.ext[ch.Key]; s != nil {
				if err := s.ValidateDecoded(dec); err != nil {
					refused = fmt.Sprintf("does not match the schema the plugin declares: %v", err)
					e.warn("X1", pl.name, "extension %q refused, the previous value stands: %s", ch.Key, refused)
					e.ctl.RestoreExtension(ch)
				}
			} else if _, w := pl.caps.Writer(ch.Key); pl.declares && !w {
				e.warn("X1", pl.name, "writes extension %q, which it does not declare in Capabilities().Extensions", ch.Key)
			}
		}
		if e.rec != nil {
			e.extTrace = append(e.extTrace, extDelta(ch.Key, dec, ok, refused))
		}
	}
}

// extDelta is one extension change as the trace shows it, credentials
// redacted (D16).
func extDelta(key string, v extschema.Decoded, present bool, refused string) trace.ExtensionDelta {
	d := trace.ExtensionDelta{Key: key, Removed: !present, Refused: redactText(refused)}
	if present {
		var b []byte
		switch {
		case v.JSON == nil:
			// Did not marshal: the error in its place.
			b, _ = json.Marshal(fmt.Sprintf("(does not marshal to JSON: %v)", errors.Unwrap(v.Err())))
		case v.Err() == nil:
			// The decoded document marshals with its keys sorted,
			// numbers as written (canonicalJSON without decoding again).
			var err error
			if b, err = v.Canonical(); err != nil {
				b = v.JSON
			}
		default:
			b = canonicalJSON(v.JSON)
		}
		d.Value = redact.Bytes(b)
	}
	return d
}

// canonicalJSON re-encodes b with object keys sorted, numbers as written:
// a parser's struct in process and the map it becomes across a process
// boundary then trace the same.
func canonicalJSON(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return b
	}
	c, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return c
}

// takeExtTrace hands the kept changes to one trace event.
func (e *Exchange) takeExtTrace() []trace.ExtensionDelta {
	d := e.extTrace
	e.extTrace = nil
	return d
}
