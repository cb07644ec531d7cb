"""Family P (the request pipeline): the types a pipeline plugin sees.

The shapes follow the Go SDK's sdk/gateway: a Factory makes one instance per
chain entry from its JSON config; an instance has on_request and on_response
and, optionally, on_response_frame (streaming), on_finish, init, ready and
shutdown. Each hook receives a Context and the exchange's Exchange.
"""

import time

CONTINUE, REJECT = "continue", "reject"
INBOUND, OUTBOUND = "inbound", "outbound"

# Phases, as the body-write rules (P17, P30) need them.
PHASE_REQUEST, PHASE_RESPONSE, PHASE_FRAME, PHASE_FINISH = "request", "response", "frame", "finish"


class Action:
    """A hook's answer: continue, or reject with a status and reason."""

    __slots__ = ("kind", "status", "reason")

    def __init__(self, kind=CONTINUE, status=0, reason=""):
        self.kind, self.status, self.reason = kind, status, reason

    def __repr__(self):
        return "Action(%r, %r, %r)" % (self.kind, self.status, self.reason)


def proceed():
    """Let the exchange go on (Go: gateway.Continue)."""
    return Action()


def reject(status, reason):
    """Stop the exchange with an HTTP status and a reason (Go: gateway.Reject)."""
    return Action(REJECT, int(status), str(reason))


class Capabilities:
    """What a plugin declares (P3, P4): body access, writes, dependencies."""

    def __init__(self, description="", reads_body=False, writes_request_body=False,
                 writes_response_body=False, requires=(), requires_any=()):
        self.description = description
        self.reads_body = reads_body
        self.writes_request_body = writes_request_body
        self.writes_response_body = writes_response_body
        self.requires = list(requires)
        self.requires_any = list(requires_any)


class Field:
    """One configuration field (Go: gateway.Field). type is one of string,
    integer, number, boolean, array, object, duration."""

    def __init__(self, name, type, required=False, description="", default=None, enum=(), fields=()):
        self.name, self.type, self.required, self.description = name, type, required, description
        self.default, self.enum, self.fields = default, list(enum), list(fields)

    def to_json(self):
        d = {"name": self.name, "type": self.type}
        if self.required:
            d["required"] = True
        if self.description:
            d["description"] = self.description
        if self.default is not None:
            d["default"] = self.default
        if self.enum:
            d["enum"] = self.enum
        if self.fields:
            d["fields"] = [f.to_json() for f in self.fields]
        return d


def _defaults(fields):
    m = {}
    for f in fields:
        if f.default is not None:
            m[f.name] = f.default
        elif f.type == "object" and f.fields:
            m[f.name] = _defaults(f.fields)
    return m


_PLACEHOLDER = {"integer": 1, "number": 1, "boolean": False, "duration": "1s", "string": "example"}


def _sample(fields):
    m = {}
    for f in fields:
        if f.default is not None:
            m[f.name] = f.default
        elif f.enum:
            m[f.name] = f.enum[0]
        elif f.type == "object":
            m[f.name] = _sample(f.fields)
        elif f.type == "array":
            m[f.name] = ["example"]
        else:
            m[f.name] = _PLACEHOLDER.get(f.type, "example")
    return m


def probe_configs(schema):
    """The configs a host tries, in order, to describe a plugin: none, the
    schema's defaults, a sample (as the Go SDK's gateway.ProbeConfigs)."""
    out = [None]
    if schema:
        out += [_defaults(schema), _sample(schema)]
    return out


class Factory:
    """Makes pipeline instances. new(config) takes the chain entry's config
    (a dict, or None when the entry has none) and returns an instance or
    raises to refuse the config. config is a list of Field (the schema)."""

    def __init__(self, new, name="", config=None):
        self.new, self.name, self.config = new, name, config


_CANON_CACHE = {}


def canonical(name):
    """Go's canonical header key: "content-type" -> "Content-Type"."""
    c = _CANON_CACHE.get(name)
    if c is None:
        c = "-".join(p[:1].upper() + p[1:].lower() for p in name.split("-"))
        _CANON_CACHE[name] = c
    return c


class Header(dict):
    """An HTTP header map (name -> list of values), keyed as Go's http.Header."""

    def get_first(self, name, default=""):
        v = dict.get(self, canonical(name))
        return v[0] if v else default

    def values(self, name=None):
        if name is None:
            return dict.values(self)
        return list(dict.get(self, canonical(name), []))

    def set(self, name, value):
        self[canonical(name)] = [value]

    def add(self, name, value):
        self.setdefault(canonical(name), []).append(value)

    def delete(self, name):
        self.pop(canonical(name), None)


class Request:
    def __init__(self):
        self.method, self.url, self.header = "", "", Header()


class Response:
    def __init__(self):
        self.status, self.header = 0, Header()


class Outcome:
    """How the exchange ended (P29), seen in on_finish."""

    def __init__(self, kind="", status=0, denied_by="", reason="", duration=0.0):
        self.kind, self.status, self.denied_by, self.reason, self.duration = kind, status, denied_by, reason, duration


class Exchange:
    """One exchange as the plugin sees it. state is the plugin's own
    per-exchange dict (typed state, P31): it lives until the exchange's last
    call for this instance and is never shared between exchanges."""

    def __init__(self, direction):
        self.direction = direction
        self.request = Request()
        self.response = Response()
        self.state = {}
        self.outcome = None
        self._req_body = None
        self._resp_body = None
        self._ext = {}
        # Set by the server before each hook call.
        self._phase = ""
        self._w_req = self._w_resp = False
        self._writes = []

    @property
    def request_body(self):
        """The request body, or None when no plugin in the chain reads bodies (P11)."""
        return self._req_body

    @property
    def response_body(self):
        """The buffered response body, or None (none, streamed, or not read: P11)."""
        return self._resp_body

    def set_request_body(self, body):
        """Replace the request body; only the declared request-body writer may,
        during on_request (P17). Returns whether it applied; the host decides."""
        return self._write(False, bytes(body))

    def set_response_body(self, body):
        """Replace the buffered response body during on_response (P17)."""
        return self._write(True, bytes(body))

    def _write(self, resp, body):
        allowed = self._w_resp if resp else self._w_req
        applied = (self._phase != PHASE_FINISH and allowed and
                   ((not resp and self._phase == PHASE_REQUEST) or (resp and self._phase == PHASE_RESPONSE)))
        if applied:
            if resp:
                self._resp_body = body
            else:
                self._req_body = body
        self._writes.append((resp, applied))
        return applied

    def extension(self, key, default=None):
        """A parser's result stored under key (for example "mcp"), as JSON values."""
        return self._ext.get(key, default)

    def set_extension(self, key, value):
        """Store a value for later plugins; it must be JSON-encodable."""
        self._ext[key] = value

    @property
    def extensions(self):
        return dict(self._ext)


class Context:
    """What a hook gets in place of Go's context.Context: the deadline (Unix
    seconds, or None) and whether the host's request context was already done."""

    __slots__ = ("deadline", "_err")

    def __init__(self, deadline=None, err=None):
        self.deadline, self._err = deadline, err

    def err(self):
        """None, "canceled" or "deadline_exceeded", as Go's ctx.Err()."""
        if self._err:
            return self._err
        if self.deadline is not None and time.time() >= self.deadline:
            return "deadline_exceeded"
        return None

    def done(self):
        return self.err() is not None

    def remaining(self):
        """Seconds left before the deadline, or None when there is none."""
        return None if self.deadline is None else self.deadline - time.time()
