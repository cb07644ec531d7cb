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
// Describing keeps mutual TLS on, as every other start does: with the
// host's certificate made once per process and the plugin's a P-256 one
// (internal/plugintls) it costs about a millisecond per binary, where
// go-plugin's AutoMTLS cost ~35 ms and was turned off here.
func NewDescriber() pluginhost.Describer {
	return pluginhost.Describer{}
}

// CatalogOptions are abctl's catalog options: the compiled-in plugins for
// the builtin source and the go-plugin describer for dir: sources.
func CatalogOptions() catalog.Options {
	return catalog.Options{Builtin: Builtins, Describer: NewDescriber()}
}
