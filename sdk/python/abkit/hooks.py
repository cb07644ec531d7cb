"""Family H (the hook bus): submit hooks, part hooks and tool reactors.

Values cross as the JSON shapes of the Go SDK's sdk/hooks (Submit, Part,
ToolEvent, ToolDecision), decoded to dicts:

- a submit hook is fn(ctx, submit) and changes submit in place; raise
  Reject(reason) to refuse the submit (H4);
- a part hook is fn(ctx, part) and returns the part;
- a tool reactor is fn(ctx, event) and returns a decision dict ({} lets it go).
"""

SUBMIT, REQUEST_PART, RESPONSE_PART, TOOL = "submit", "request_part", "response_part", "tool"


class Reject(Exception):
    """Raised by a submit hook to reject the submit with a reason (H4)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class Error(Exception):
    """Raised by a hook to fail without it counting as a crash; any other
    exception is reported like a Go panic, with its traceback."""


class Hook:
    def __init__(self, id, kind, fn, order=0, policy=""):
        self.id, self.kind, self.fn, self.order, self.policy = id, kind, fn, order, policy


def submit_hook(id, fn, order=0, policy=""):
    return Hook(id, SUBMIT, fn, order, policy)


def part_hook(id, kind, fn, order=0, policy=""):
    return Hook(id, kind, fn, order, policy)


def tool_reactor(id, fn, order=0, policy=""):
    return Hook(id, TOOL, fn, order, policy)
