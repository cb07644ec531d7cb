#!/usr/bin/env python3
# abkit-plugin: dir: sources start this script (docs/catalog.md)
"""pass-through: the smallest family P plugin; lets every exchange through."""
import os
import sys

# The SDK from this repository (an author with abkit installed drops this).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "sdk", "python"))

import abkit  # noqa: E402
from abkit import gateway as gw  # noqa: E402


class PassThrough:
    def on_request(self, ctx, ex):
        return gw.proceed()

    def on_response(self, ctx, ex):
        return gw.proceed()


if __name__ == "__main__":
    abkit.serve(abkit.Plugin("pass-through", "Lets every exchange through unchanged", version="1.0.0",
                             pipeline=gw.Factory(lambda cfg: PassThrough())))
