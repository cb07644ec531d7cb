#!/usr/bin/env python3
# abkit-plugin: dir: sources start this script (docs/catalog.md)
"""tool-policy: a family D extension in Python. Blocks the tools it is told
to at tool.before and answers permission.decision for them."""
import os
import sys

# The SDK from this repository (an author with abkit installed drops this).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "sdk", "python"))

import abkit  # noqa: E402
from abkit import intercept as ic  # noqa: E402

BLOCKED = {"shell", "rm"}


class ToolPolicy:
    def __init__(self):
        self.seen = 0

    def call(self, ctx, point, payload):
        name = payload.get("name", "") if isinstance(payload, dict) else ""
        if point == "tool.before" and name in BLOCKED:
            return ic.block("tool %s is not allowed" % name)
        if point == "permission.decision" and name in BLOCKED:
            return ic.deny("tool %s is not allowed" % name)
        return ic.proceed()

    def notify(self, point, payload):
        self.seen += 1


if __name__ == "__main__":
    abkit.serve(abkit.Plugin("py-tool-policy", "Blocks listed tools before they run", version="1.0.0",
                             extension=ic.Extension(ic.Manifest("py-tool-policy",
                                                                points=["tool.before", "permission.decision",
                                                                        "session.start"]),
                                                    ToolPolicy)))
