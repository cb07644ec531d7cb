package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/abkit/abkit/internal/pluginhost"
	"github.com/abkit/abkit/internal/probe"
	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/hooks"
	"github.com/abkit/abkit/sdk/intercept"
)

// Binary returns a launcher that starts the plugin binary at path through
// go-plugin (internal/pluginhost) for every subject. opts tune the host;
// the case timeout bounds each call anyway.
func Binary(path string, opts pluginhost.Options) Launcher {
	return &binary{path: path, opts: opts}
}

type binary struct {
	path string
	opts pluginhost.Options

	mu   sync.Mutex
	live map[*procSubject]struct{}
}

// Target is the program and, for an interpreted plugin, its arguments.
func (b *binary) Target() string {
	if len(b.opts.Args) == 0 {
		return b.path
	}
	return b.path + " " + strings.Join(b.opts.Args, " ")
}

func (b *binary) Launch(ctx context.Context) (Subject, error) {
	if _, err := os.Stat(b.path); err != nil {
		return nil, fmt.Errorf("plugin binary: %w", err)
	}
	p, err := pluginhost.Load(ctx, b.path, b.opts)
	if err != nil {
		return nil, err
	}
	s := newProcSubject(p)
	b.mu.Lock()
	if b.live == nil {
		b.live = map[*procSubject]struct{}{}
	}
	b.live[s] = struct{}{}
	b.mu.Unlock()
	s.onClose = func() {
		b.mu.Lock()
		delete(b.live, s)
		b.mu.Unlock()
	}
	return s, nil
}

// AbortCalls ends the calls in flight to every plugin process the launcher
// started and has not closed: Run calls it when the run is cancelled
// (SIGINT, SIGTERM), so a hung call does not wait for the case timeout.
func (b *binary) AbortCalls() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.live {
		s.p.AbortCalls()
	}
}

// procSubject is a plugin process behind the protocol.
type procSubject struct {
	p    *pluginhost.Plugin
	d    *Reported
	plug sdk.Plugin
	once sync.Once
	// onClose forgets the subject in its launcher.
	onClose func()
}

func newProcSubject(p *pluginhost.Plugin) *procSubject {
	s := &procSubject{p: p, d: describeProto(p.Description())}
	s.plug = sdk.Plugin{Name: s.d.Name, Description: s.d.Description, Version: s.d.Version}
	if f, ok := p.Factory(); ok {
		s.plug.Pipeline = &f
		if pi := s.d.Pipeline; pi != nil && pi.ProbeError != "" {
			// The SDK's Describe tries every gateway.ProbeConfigs; a plugin
			// built otherwise may not, so the suite tries them itself before
			// giving up.
			if insts, _, err := probe.Instances(&f); err == nil {
				pi.ProbeError = ""
				pi.Capabilities, pi.InstanceName, pi.Behaviours = insts[0].Capabilities(), insts[0].Name(), gateway.Behaviours(insts[0])
				pi.Observed = nil
				for _, in := range insts {
					pi.Observed = append(pi.Observed, probe.Observe(in))
				}
			}
		}
	}
	if m, ok := p.Manifest(); ok {
		ext := p.Extension()
		s.plug.Extension = &sdk.Extension{Manifest: m, New: func() (intercept.Extension, error) { return ext, nil }}
	}
	if sub, parts, tools := p.Hooks(); len(sub)+len(parts)+len(tools) > 0 {
		s.plug.Hooks = &sdk.HookSet{Submit: sub, Parts: parts, Tools: tools}
	}
	return s
}

func (s *procSubject) Describe() *Reported { return s.d }
func (s *procSubject) Plugin() sdk.Plugin  { return s.plug }
func (s *procSubject) Stderr() string      { return s.p.Stderr() }

// StderrLines returns every kept line of the plugin's stderr, not only the
// tail the reports quote.
func (s *procSubject) StderrLines() []string { return s.p.StderrLines() }

func (s *procSubject) Exited() error {
	if !s.p.Exited() {
		return nil
	}
	msg := "the plugin process exited"
	if tail := strings.TrimSpace(StripDebugLog(s.p.Stderr())); tail != "" {
		msg += "; its stderr ended with:\n" + lastLines(tail, 8)
	}
	return errors.New(msg)
}

func (s *procSubject) Close() error {
	var err error
	s.once.Do(func() {
		if s.onClose != nil {
			s.onClose()
		}
		err = s.p.Close()
	})
	return err
}

// describeProto converts the protocol's Describe answer, as reported.
func describeProto(r *abkitv1.DescribeResponse) *Reported {
	d := &Reported{Name: r.GetName(), Description: r.GetDescription(), Version: r.GetVersion(),
		Families: append([]string(nil), r.GetFamilies()...), Alternatives: r.GetAlternatives()}
	if pi := r.GetPipeline(); pi != nil {
		info := &PipelineInfo{ProbeError: pi.GetProbeError()}
		if c := pi.GetCapabilities(); c != nil {
			info.Capabilities = c.Gateway()
			info.InstanceName = c.GetName()
		}
		info.Behaviours = append([]string(nil), pi.GetBehaviours()...)
		sort.Strings(info.Behaviours)
		if b := pi.GetConfigSchemaJson(); len(b) > 0 {
			var cs gateway.ConfigSchema
			if json.Unmarshal(b, &cs) == nil {
				info.Config = &cs
			}
		}
		for _, o := range pi.GetObserved() {
			info.Observed = append(info.Observed, probe.Observed{Name: o.GetName(), Capabilities: o.Gateway()})
		}
		d.Pipeline = info
	}
	if m := r.GetExtension(); m != nil {
		mf := intercept.Manifest{PluginID: m.GetPluginId(), Required: m.GetRequired(), Priority: int(m.GetPriority())}
		mf.Timeout = durationNS(m.GetTimeoutNs())
		for _, p := range m.GetPoints() {
			mf.Points = append(mf.Points, intercept.Point(p))
		}
		if len(m.GetSlots()) > 0 {
			mf.Slots = append([]string(nil), m.GetSlots()...)
		}
		d.Extension = &mf
	}
	for _, h := range r.GetHooks() {
		d.Hooks = append(d.Hooks, hooks.Spec{ID: h.GetId(), Order: int(h.GetOrder()), Policy: hooks.Policy(h.GetPolicy()), Kind: hooks.Kind(h.GetKind())})
	}
	return d
}

func durationNS(n int64) time.Duration { return time.Duration(n) }

// Echo makes one diagnostics round trip to the plugin process, which the
// SDK answers without running plugin code: the baseline P14 judges Ready
// against.
func (s *procSubject) Echo(ctx context.Context) error {
	_, err := s.p.Echo(ctx, nil)
	return err
}
