package sdk

import (
	"encoding/json"
	"fmt"

	"github.com/abkit/abkit/sdk/gateway"
)

// PipelinePlugin returns the bundle of a family P plugin whose name and
// description are given once, here, rather than in three places (the
// bundle's Name, the factory's Name and every instance's Name(), and the
// description in both the bundle and Capabilities):
//
//   - f.Name may be left empty: it becomes name. A different non-empty
//     f.Name is kept, and [Plugin.Validate] reports the mismatch.
//   - An instance whose Name() returns "" reports name, and one whose
//     Capabilities().Description is "" reports description. An instance
//     that reports another name is refused by New with an error naming
//     both, since a host would file its traces under the wrong plugin.
//
// An instance that reports both already is returned as it is; one that
// needs filling in is wrapped, keeping exactly its optional behaviours
// ([gateway.Compose]), so a host sees the same plugin. The bundle, with
// Pipeline set, is then the one authoritative place: catalogs, Serve and
// in-process hosts all read it.
//
// A plugin written the long way (a literal sdk.Plugin whose Pipeline.Name
// and instances repeat the name) keeps working unchanged.
func PipelinePlugin(name, description string, f gateway.Factory) Plugin {
	if f.Name == "" {
		f.Name = name
	}
	if next := f.New; next != nil {
		f.New = func(config json.RawMessage) (gateway.Plugin, error) {
			p, err := next(config)
			if err != nil || p == nil {
				return p, err
			}
			return withIdentity(p, name, description)
		}
	}
	return Plugin{Name: name, Description: description, Pipeline: &f}
}

// withIdentity gives p the bundle's name and description where it reports
// none, and refuses a different name.
func withIdentity(p gateway.Plugin, name, description string) (gateway.Plugin, error) {
	got := p.Name()
	if got != "" && got != name {
		return nil, fmt.Errorf("plugin %q: the instance reports name %q; return %q from Name(), or \"\" to use the bundle's", name, got, name)
	}
	caps := p.Capabilities()
	if got == name && (caps.Description != "" || description == "") {
		return p, nil
	}
	if caps.Description == "" {
		caps.Description = description
	}
	return gateway.Compose(named{Plugin: p, name: name, caps: caps}, gateway.OptionalOf(p)), nil
}

// named is an instance with the bundle's identity. Capabilities are
// static (P2), so they are read once.
type named struct {
	gateway.Plugin
	name string
	caps gateway.Capabilities
}

func (n named) Name() string                       { return n.name }
func (n named) Capabilities() gateway.Capabilities { return n.caps }
