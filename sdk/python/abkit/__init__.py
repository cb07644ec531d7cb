"""abkit's Python SDK: write an abkit plugin in Python and serve it.

A plugin is a Plugin bundle (name, description, version and any of the
families P, D, H) handed to serve(), which speaks hashicorp/go-plugin's
handshake, mutual TLS and gRPC, so that abctl and conformance load it as
they load a Go plugin:

    import abkit
    from abkit import gateway as gw

    class PassThrough:
        def on_request(self, ctx, ex):
            return gw.proceed()
        def on_response(self, ctx, ex):
            return gw.proceed()

    abkit.serve(abkit.Plugin("pass-through", "Lets every exchange through",
                             pipeline=gw.Factory(lambda cfg: PassThrough())))

See docs/plugins-in-other-languages.md for the wire protocol.
"""

import os
import sys

# The generated stubs import "abkit.v1"; this package is "abkit".
from .gateway import Capabilities, Factory, Field, proceed, reject  # noqa: F401
from .intercept import Extension, Manifest  # noqa: F401
from . import gateway, intercept, hooks  # noqa: F401

MAGIC_COOKIE_KEY = "ABKIT_PLUGIN_MAGIC_COOKIE"
MAGIC_COOKIE_VALUE = "7d1f3c5e-abkit-plugin-v1-b2a94e60"
PROTOCOL_VERSION = 1
DEBUG_ENV = "ABKIT_PLUGIN_DEBUG"


class Plugin:
    """What one plugin serves (Go: sdk.Plugin). Set the families it
    implements: pipeline (a gateway.Factory, family P), extension (an
    intercept.Extension, family D), hooks (a list of hooks.Hook, family H)."""

    def __init__(self, name, description, version="", pipeline=None, extension=None, hooks=None,
                 alternatives=None):
        self.name, self.description, self.version = name, description, version
        self.pipeline, self.extension, self.hooks = pipeline, extension, hooks
        self.alternatives = dict(alternatives or {})
        if pipeline is not None and not pipeline.name:
            pipeline.name = name

    def families(self):
        return [f for f, v in (("P", self.pipeline), ("D", self.extension), ("H", self.hooks)) if v]

    def servable(self):
        """Every problem that makes the bundle impossible to serve, as a list."""
        errs = []
        if not self.name:
            errs.append("plugin name is empty")
        if not self.families():
            errs.append("plugin %r serves no family: set pipeline, extension or hooks" % self.name)
        if self.pipeline is not None:
            if self.pipeline.name != self.name:
                errs.append("plugin %r: pipeline.name is %r; make them equal" % (self.name, self.pipeline.name))
            if not callable(self.pipeline.new):
                errs.append("plugin %r: pipeline.new is not callable" % self.name)
        if self.extension is not None and not callable(self.extension.new):
            errs.append("plugin %r: extension.new is not callable" % self.name)
        return errs

    def check_description(self):
        """Why the description breaks P5 (empty, several lines, over 80 characters), or ""."""
        d = self.description
        if not d.strip():
            return "description is empty"
        if "\n" in d or "\r" in d:
            return "description has more than one line"
        if len(d) > 80:
            return "description is %d characters long; shorten it to at most 80" % len(d)
        return ""


def serve(plugin):
    """Serve plugin to the host that started this process; does not return.

    Exits 1 when not started by an abkit host (go-plugin's notice, as a Go
    plugin), 2 when the bundle cannot be served."""
    from . import _serve
    errs = plugin.servable()
    if errs:
        sys.stderr.write("abkit plugin %r cannot be served: %s\n" % (plugin.name, "; ".join(errs)))
        sys.exit(2)
    bad = plugin.check_description()
    if bad:
        sys.stderr.write("abkit plugin %r: warning: Plugin.description breaks P5: %s; serving it anyway, "
                         "hosts will flag it (catalog lint, conformance case P5/description/plugin)\n"
                         % (plugin.name, bad))
    debug = os.environ.get(DEBUG_ENV, "")
    _serve.run(plugin, debug=debug not in ("", "0", "false"))
