#!/usr/bin/env python3
# abkit-plugin: dir: sources start this script (docs/catalog.md)
"""submit-tagger: a family H hook in Python. Tags every submit's metadata
and rejects a submit with no model."""
import os
import sys

# The SDK from this repository (an author with abkit installed drops this).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "sdk", "python"))

import abkit  # noqa: E402
from abkit import hooks  # noqa: E402


def tag(ctx, submit):
    if not submit.get("model"):
        raise hooks.Reject("submit names no model")
    submit.setdefault("metadata", {})["tagged-by"] = "py-submit-tagger"


if __name__ == "__main__":
    abkit.serve(abkit.Plugin("py-submit-tagger", "Tags submits and rejects those without a model",
                             version="1.0.0", hooks=[hooks.submit_hook("py-submit-tagger", tag, order=10)]))
