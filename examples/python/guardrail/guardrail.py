#!/usr/bin/env python3
# abkit-plugin: dir: sources start this script (docs/catalog.md)
"""guardrail: a family P plugin in Python. Rejects requests whose body names a
blocked word, and counts blocked words in streamed response frames, which
later plugins read as the "guardrail" extension."""
import os
import sys

# The SDK from this repository (an author with abkit installed drops this).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "sdk", "python"))

import abkit  # noqa: E402
from abkit import gateway as gw  # noqa: E402

NAME = "py-guardrail"


class Guardrail:
    def __init__(self, cfg):
        words = (cfg or {}).get("words", ["forbidden"])
        if not isinstance(words, list) or not all(isinstance(w, str) and w for w in words):
            raise ValueError("config field words: want a list of non-empty strings")
        self.words = [w.lower().encode() for w in words]

    def capabilities(self):
        return gw.Capabilities(reads_body=True)

    def _hits(self, data):
        low = (data or b"").lower()
        return sum(low.count(w) for w in self.words)

    def on_request(self, ctx, ex):
        if self._hits(ex.request_body):
            return gw.reject(403, "request names a blocked word")
        return gw.proceed()

    def on_response(self, ctx, ex):
        ex.set_extension("guardrail", {"response_hits": self._hits(ex.response_body)})
        return gw.proceed()

    def on_response_frame(self, ctx, ex, frame, last):
        ex.state["hits"] = ex.state.get("hits", 0) + self._hits(frame)
        if last:
            ex.set_extension("guardrail", {"response_hits": ex.state["hits"]})
        return gw.proceed()


if __name__ == "__main__":
    abkit.serve(abkit.Plugin(NAME, "Rejects requests naming blocked words; counts them in responses",
                             version="1.0.0",
                             pipeline=gw.Factory(Guardrail, config=[
                                 gw.Field("words", "array", description="blocked words, case-insensitive",
                                          default=["forbidden"])])))
