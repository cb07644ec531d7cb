package gateway

import (
	"encoding/json"
	"math"
	"strconv"
)

// Defaults returns a config object made of the schema's defaults: every
// field that has a default, and every object field with sub-fields as the
// object of its own defaults. It is nil when s is nil or a default does not
// marshal to JSON.
func (s *ConfigSchema) Defaults() json.RawMessage {
	if s == nil {
		return nil
	}
	return marshalConfig(defaultsOf(s.Fields))
}

// Sample returns a config object with every field set: its default, or else
// a placeholder of its type (the first enum value where there is one; 1 for
// numbers, false for booleans, "1s" for durations, "example" for strings,
// a one-element array for arrays). It is nil when s is nil or a default
// does not marshal to JSON.
func (s *ConfigSchema) Sample() json.RawMessage {
	if s == nil {
		return nil
	}
	return marshalConfig(sampleOf(s.Fields))
}

// ProbeConfigs returns the configs a host may try, in order, to make an
// instance of a plugin for describing it: none (nil), the schema's
// [ConfigSchema.Defaults], its [ConfigSchema.Sample], then its
// [ConfigSchema.Examples]. A plugin that
// needs configuration is described with the first one it accepts;
// capabilities are static (P2), so any config that makes an instance tells
// the truth about them. A schema's config that does not marshal is left
// out.
func ProbeConfigs(schema *ConfigSchema) []json.RawMessage {
	configs := []json.RawMessage{nil}
	for _, c := range []json.RawMessage{schema.Defaults(), schema.Sample()} {
		if c != nil {
			configs = append(configs, c)
		}
	}
	if schema != nil {
		for _, c := range schema.Examples {
			if len(c) > 0 {
				configs = append(configs, c)
			}
		}
	}
	return configs
}

// Describes reports whether the schema gives a host any config to try
// beyond none: fields (whose defaults and sample it can make) or examples.
// A plugin whose schema describes nothing, and that refuses to be made
// without config, cannot be probed.
func (s *ConfigSchema) Describes() bool {
	return s != nil && (len(s.Fields) > 0 || len(s.Examples) > 0)
}

func marshalConfig(m map[string]any) json.RawMessage {
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

func defaultsOf(fields []Field) map[string]any {
	m := map[string]any{}
	for _, f := range fields {
		switch {
		case f.Default != nil:
			m[f.Name] = f.Default
		case f.Type == "object" && len(f.Fields) > 0:
			m[f.Name] = defaultsOf(f.Fields)
		}
	}
	return m
}

func sampleOf(fields []Field) map[string]any {
	m := map[string]any{}
	for _, f := range fields {
		if f.Default != nil {
			m[f.Name] = f.Default
			continue
		}
		m[f.Name] = sampleValue(f)
	}
	return m
}

func sampleValue(f Field) any {
	first := func(def any) any {
		if len(f.Enum) > 0 {
			return f.Enum[0]
		}
		return def
	}
	switch f.Type {
	case "integer", "number":
		if len(f.Enum) > 0 {
			if n, err := strconv.ParseFloat(f.Enum[0], 64); err == nil {
				return n
			}
		}
		// 1 unless the bounds exclude it: the nearest bound then.
		round := func(x float64, up bool) float64 {
			switch {
			case f.Type != "integer":
				return x
			case up:
				return math.Ceil(x)
			}
			return math.Floor(x)
		}
		switch {
		case f.Minimum != nil && *f.Minimum > 1:
			return round(*f.Minimum, true)
		case f.Maximum != nil && *f.Maximum < 1:
			return round(*f.Maximum, false)
		}
		return 1
	case "boolean":
		return false
	case "duration":
		return first("1s")
	case "object":
		return sampleOf(f.Fields)
	case "array":
		if len(f.Fields) > 0 {
			return []any{sampleOf(f.Fields)}
		}
		return []any{first("example")}
	}
	return first("example")
}
