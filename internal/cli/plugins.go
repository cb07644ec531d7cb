package cli

import (
	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pluginhost"
)

// NewDescriber returns the describer abctl uses for the catalog's dir:
// sources: the plugin host's, which starts each binary and asks it what it
// serves. The SDK's Describe probes with every gateway.ProbeConfigs, as the
// builtin source does, so a binary and its compiled-in twin have the same
// descriptor.
//
// It turns off go-plugin's automatic mutual TLS: a description exchanges
// only the plugin's own metadata with a child process that lives for a few
// milliseconds, and the two certificates cost about 35 ms per binary, which
// would put a cold listing of 50 binaries over its 1 s budget. Plugins that
// carry traffic (dryrun --plugin-dir) keep mutual TLS.
func NewDescriber() pluginhost.Describer {
	return pluginhost.Describer{Options: pluginhost.Options{DisableAutoMTLS: true}}
}

// CatalogOptions are abctl's catalog options: the compiled-in plugins for
// the builtin source and the go-plugin describer for dir: sources.
func CatalogOptions() catalog.Options {
	return catalog.Options{Builtin: Builtins, Describer: NewDescriber()}
}
