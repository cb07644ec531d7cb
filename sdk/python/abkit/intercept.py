"""Family D (the intercept dispatcher): an extension answers at points.

An extension object has call(ctx, point, payload) returning an Answer and,
optionally, notify(point, payload) for event-only points (D20). payload is
the point's JSON payload, decoded; a replacement is any JSON value.
"""

CONTINUE, BLOCK, REPLACE, ALLOW, DENY = "continue", "block", "replace", "allow", "deny"


class Answer:
    def __init__(self, decision=CONTINUE, reason="", replacement=None):
        self.decision, self.reason, self.replacement = decision, reason, replacement


def proceed():
    return Answer(CONTINUE)


def block(reason):
    return Answer(BLOCK, reason)


def allow(reason=""):
    return Answer(ALLOW, reason)


def deny(reason):
    return Answer(DENY, reason)


def replace(payload):
    return Answer(REPLACE, "", payload)


class Manifest:
    """The extension's manifest (Go: intercept.Manifest); timeout in seconds."""

    def __init__(self, plugin_id, points=(), required=False, priority=0, slots=(), timeout=0.0):
        self.plugin_id, self.points, self.required = plugin_id, list(points), required
        self.priority, self.slots, self.timeout = priority, list(slots), timeout


class Extension:
    """A family D bundle part: its manifest and a constructor (Go: sdk.Extension)."""

    def __init__(self, manifest, new):
        self.manifest, self.new = manifest, new
