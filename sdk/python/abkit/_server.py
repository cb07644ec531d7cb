"""The abkit protocol (proto/abkit/v1) for one Plugin bundle: the Python
counterpart of the Go SDK's internal/pluginserver. Authors call serve()."""

import json
import threading
import time
import traceback

import grpc

from abkit.v1 import abkit_pb2 as pb
from abkit.v1 import abkit_pb2_grpc as pbg

from . import gateway as gw
from . import hooks as hk

SDK_VERSION = "abkit-python-sdk/v1"

_BEHAVIOURS = (("finish", "on_finish"), ("init", "init"), ("ready", "ready"),
               ("shutdown", "shutdown"), ("stream", "on_response_frame"))


def behaviours(inst):
    """The optional behaviours inst implements, sorted, as Describe reports them."""
    return [b for b, m in _BEHAVIOURS if callable(getattr(inst, m, None))]


def _panic_text(exc):
    """An exception as the host shows a Go panic: the value, then the stack."""
    return "%s: %s\n\n%s" % (type(exc).__name__, exc, "".join(traceback.format_exception(exc)))


def _canon_json(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _header_from(hs):
    h = gw.Header()
    for x in hs:
        h[gw.canonical(x.name)] = list(x.values)
    return h


class _Instance:
    def __init__(self, name, obj, direction, caps):
        self.name, self.obj, self.direction = name, obj, direction
        self.w_req = caps.writes_request_body
        self.w_resp = caps.writes_response_body
        self.lock = threading.Lock()
        self.exs = {}

    def state(self, ex_id, direction):
        with self.lock:
            st = self.exs.get(ex_id)
            if st is None:
                st = _ExState(gw.Exchange(direction or self.direction))
                self.exs[ex_id] = st
            return st

    def drop(self, ex_id):
        with self.lock:
            self.exs.pop(ex_id, None)


class _ExState:
    def __init__(self, ex):
        self.ex = ex
        self.seen = {}  # extension key -> JSON as both sides last saw it

    def apply(self, req, resp, exts):
        ex = self.ex
        if req is not None:
            ex.request.method, ex.request.url = req.method, req.url
            ex.request.header = _header_from(req.header)
            if req.has_body:
                ex._req_body = bytes(req.body)
        if resp is not None:
            ex.response.status = resp.status
            ex.response.header = _header_from(resp.header)
            if resp.has_body:
                ex._resp_body = bytes(resp.body)
        for e in exts:
            try:
                v = json.loads(e.json)
            except ValueError:
                continue  # the host only sends what json.Marshal made
            ex._ext[e.key] = v
            self.seen[e.key] = _canon_json(v)

    def enter(self, phase, inst):
        self.ex._phase, self.ex._w_req, self.ex._w_resp = phase, inst.w_req, inst.w_resp
        self.ex._writes = []

    def collect(self):
        """The body writes the call attempted and the extensions it changed."""
        ex = self.ex
        writes = []
        for resp, applied in ex._writes:
            w = pb.BodyWrite(response=resp, applied=applied)
            if applied:
                w.body = (ex._resp_body if resp else ex._req_body) or b""
            writes.append(w)
        ex._writes = []
        exts = []
        for k, v in ex._ext.items():
            try:
                b = _canon_json(v)
            except (TypeError, ValueError) as err:
                b = _canon_json("extension %r does not encode to JSON: %s" % (k, err))
            if self.seen.get(k) == b:
                continue
            self.seen[k] = b
            exts.append(pb.ExtensionValue(key=k, json=b))
        return writes, exts


def _caps_proto(name, c):
    return pb.Capabilities(name=name, description=c.description, reads_body=c.reads_body,
                           writes_request_body=c.writes_request_body,
                           writes_response_body=c.writes_response_body,
                           requires=c.requires, requires_any=c.requires_any)


def _ctx(grpc_ctx, ctx_err, deadline_ns=0):
    """The hook's context, as it would be in-process: the request's deadline
    (the frame's deadline_unix_nano, or the call's gRPC deadline) and, when the
    host's context was already done (ctx_err), done the same way."""
    deadline = None
    if deadline_ns:
        deadline = deadline_ns / 1e9
    else:
        rem = grpc_ctx.time_remaining()
        if rem is not None:
            deadline = time.time() + rem
    return gw.Context(deadline, ctx_err or None)


class Server(pbg.PluginServicer):
    def __init__(self, plugin):
        self.p = plugin
        self.ext = plugin.extension.new() if plugin.extension else None
        self.hooks = list(plugin.hooks or [])
        self.lock = threading.Lock()
        self.next_inst = 0
        self.insts = {}
        self.desc = self._describe()

    # --- instances -------------------------------------------------------

    def _new(self, cfg):
        """An instance and its capabilities; the bundle fills in a missing
        name and description, as the Go SDK's PipelinePlugin does."""
        obj = self.p.pipeline.new(cfg)
        if obj is None:
            raise ValueError("factory returned no instance")
        name = getattr(obj, "name", None)
        name = name() if callable(name) else name
        caps = getattr(obj, "capabilities", None)
        caps = caps() if callable(caps) else caps
        caps = caps or gw.Capabilities()
        if not caps.description:
            caps.description = self.p.description
        return obj, name or self.p.name, caps

    def _describe(self):
        p = self.p
        d = pb.DescribeResponse(name=p.name, description=p.description, version=p.version,
                                families=p.families(), sdk=SDK_VERSION, alternatives=p.alternatives)
        if p.pipeline:
            info = pb.PipelineInfo()
            schema = p.pipeline.config
            if schema:
                info.config_schema_json = json.dumps({"fields": [f.to_json() for f in schema]}).encode()
            first_err, insts = None, None
            for cfg in gw.probe_configs(schema):
                try:
                    insts = [self._new(cfg), self._new(cfg)]
                    break
                except Exception as e:  # a factory that refuses or fails
                    first_err = first_err or e
            if insts is None:
                info.probe_error = str(first_err)
            else:
                obj, name, caps = insts[0]
                info.capabilities.CopyFrom(_caps_proto(name, caps))
                info.behaviours.extend(behaviours(obj))
                for _, n, c in insts:
                    info.observed.append(_caps_proto(n, c))
            d.pipeline.CopyFrom(info)
        if p.extension:
            m = p.extension.manifest
            d.extension.CopyFrom(pb.Manifest(plugin_id=m.plugin_id, required=m.required, points=m.points,
                                             priority=m.priority, slots=m.slots,
                                             timeout_ns=int(m.timeout * 1e9)))
        for i, h in enumerate(self.hooks):
            d.hooks.append(pb.HookSpec(id=h.id, order=h.order, policy=h.policy, kind=h.kind, index=i))
        return d

    def _instance(self, ctx, inst_id):
        with self.lock:
            inst = self.insts.get(inst_id)
        if inst is None:
            if not self.p.pipeline:
                ctx.abort(grpc.StatusCode.UNIMPLEMENTED, "plugin %r serves no pipeline (family P)" % self.p.name)
            ctx.abort(grpc.StatusCode.NOT_FOUND, "plugin %r has no instance %d" % (self.p.name, inst_id))
        return inst

    # --- the protocol ----------------------------------------------------

    def Describe(self, request, context):
        return self.desc

    def NewInstance(self, r, context):
        if not self.p.pipeline:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "plugin %r serves no pipeline (family P)" % self.p.name)
        cfg = json.loads(r.config_json) if r.config_json else None
        try:
            obj, name, caps = self._new(cfg)
        except Exception as e:
            return pb.NewInstanceResponse(error=str(e) or type(e).__name__)
        inst = _Instance(self.p.name, obj, r.direction or gw.INBOUND, caps)
        # P4: a writer reads bodies; the write rules use what was declared.
        with self.lock:
            self.next_inst += 1
            iid = self.next_inst
            self.insts[iid] = inst
        return pb.NewInstanceResponse(instance=iid, capabilities=_caps_proto(name, caps),
                                      behaviours=behaviours(obj))

    def _lifecycle(self, r, context, method):
        inst = self._instance(context, r.instance)
        fn = getattr(inst.obj, method, None)
        if not callable(fn):
            return pb.Status()
        try:
            err = fn(_ctx(context, ""))
        except Exception as e:
            return pb.Status(error="panic: " + _panic_text(e))
        return pb.Status(error=str(err) if err else "")

    def Init(self, r, context):
        return self._lifecycle(r, context, "init")

    def Shutdown(self, r, context):
        return self._lifecycle(r, context, "shutdown")

    def Ready(self, r, context):
        return self._lifecycle(r, context, "ready")

    def _hook(self, r, context, phase):
        inst = self._instance(context, r.instance)
        st = inst.state(r.exchange, r.direction)
        try:
            st.apply(r.request if r.HasField("request") else None,
                     r.response if r.HasField("response") else None, r.extensions)
            if r.HasField("outcome"):
                o = r.outcome
                st.ex.outcome = gw.Outcome(o.kind, o.status, o.denied_by, o.reason, o.duration_ns / 1e9)
            st.enter(phase, inst)
            ctx = _ctx(context, r.ctx_err)
            act, herr, panic = gw.proceed(), "", ""
            try:
                if phase == gw.PHASE_REQUEST:
                    act = inst.obj.on_request(ctx, st.ex)
                elif phase == gw.PHASE_RESPONSE:
                    act = inst.obj.on_response(ctx, st.ex)
                else:
                    fin = getattr(inst.obj, "on_finish", None)
                    if callable(fin):
                        e = fin(ctx, st.ex)
                        herr = str(e) if e else ""
            except Exception as e:
                panic = _panic_text(e)
            act = act or gw.proceed()
            resp = pb.HookResponse(action=pb.Action(kind=act.kind, status=act.status, reason=act.reason))
            writes, exts = st.collect()
            resp.writes.extend(writes)
            resp.extensions.extend(exts)
            if panic:
                resp.error, resp.panicked = panic, True
            elif herr:
                resp.error = herr
            return resp
        finally:
            if r.final:
                inst.drop(r.exchange)

    def OnRequest(self, r, context):
        return self._hook(r, context, gw.PHASE_REQUEST)

    def OnResponse(self, r, context):
        return self._hook(r, context, gw.PHASE_RESPONSE)

    def Finish(self, r, context):
        return self._hook(r, context, gw.PHASE_FINISH)

    def Release(self, r, context):
        inst = self._instance(context, r.instance)
        for x in r.exchanges:
            inst.drop(x)
        return pb.Empty()

    def Frames(self, request_iterator, context):
        inst = st = None
        ex_id = 0
        for r in request_iterator:
            if inst is None:
                inst = self._instance(context, r.instance)
                if not callable(getattr(inst.obj, "on_response_frame", None)):
                    context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                  "plugin %r does not stream responses" % inst.name)
                ex_id = r.exchange
                st = inst.state(ex_id, "")
            st.apply(None, r.response if r.HasField("response") else None, r.extensions)
            st.enter(gw.PHASE_FRAME, inst)
            act, panic = gw.proceed(), ""
            try:
                act = inst.obj.on_response_frame(_ctx(context, r.ctx_err, r.deadline_unix_nano), st.ex,
                                                 bytes(r.frame), r.last) or gw.proceed()
            except Exception as e:
                panic = _panic_text(e)
            resp = pb.FrameResponse(action=pb.Action(kind=act.kind, status=act.status, reason=act.reason))
            writes, exts = st.collect()
            resp.writes.extend(writes)
            resp.extensions.extend(exts)
            if panic:
                resp.error, resp.panicked = panic, True
            if r.final:
                inst.drop(ex_id)
            yield resp

    # --- family D --------------------------------------------------------

    def Intercept(self, r, context):
        if self.ext is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "plugin %r serves no extension (family D)" % self.p.name)
        try:
            payload = json.loads(r.payload_json) if r.payload_json else None
            a = self.ext.call(_ctx(context, ""), r.point, payload)
        except Exception as e:
            return pb.InterceptResponse(error="panic: " + _panic_text(e))
        resp = pb.InterceptResponse(decision=a.decision, reason=a.reason)
        if a.replacement is not None:
            resp.replacement_json = json.dumps(a.replacement).encode()
        return resp

    def Notify(self, r, context):
        if self.ext is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "plugin %r serves no extension (family D)" % self.p.name)
        fn = getattr(self.ext, "notify", None)
        if not callable(fn):
            return pb.Status()
        try:
            err = fn(r.point, json.loads(r.payload_json) if r.payload_json else None)
        except Exception as e:
            return pb.Status(error="panic: " + _panic_text(e))
        return pb.Status(error=str(err) if err else "")

    # --- family H --------------------------------------------------------

    def _hook_at(self, context, i, kinds):
        if i >= len(self.hooks):
            context.abort(grpc.StatusCode.NOT_FOUND, "plugin %r has no hook %d" % (self.p.name, i))
        h = self.hooks[i]
        if h.kind not in kinds:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "hook %r is a %s hook" % (h.id, h.kind))
        return h

    @staticmethod
    def _hook_error(e):
        if isinstance(e, hk.Reject):
            return pb.HookError(kind="reject", message=e.reason)
        if isinstance(e, hk.Error):
            return pb.HookError(kind="error", message=str(e))
        return pb.HookError(kind="error", message=_panic_text(e), panicked=True)

    def Submit(self, r, context):
        h = self._hook_at(context, r.hook, (hk.SUBMIT,))
        sub = json.loads(r.submit_json)
        resp = pb.SubmitResponse()
        try:
            err = h.fn(_ctx(context, ""), sub)
            if err:
                resp.error.CopyFrom(pb.HookError(kind="error", message=str(err)))
        except Exception as e:
            resp.error.CopyFrom(self._hook_error(e))
        resp.submit_json = json.dumps(sub).encode()
        return resp

    def Part(self, r, context):
        h = self._hook_at(context, r.hook, (hk.REQUEST_PART, hk.RESPONSE_PART))
        resp = pb.PartResponse()
        try:
            resp.part_json = json.dumps(h.fn(_ctx(context, ""), json.loads(r.part_json))).encode()
        except Exception as e:
            resp.error.CopyFrom(self._hook_error(e))
        return resp

    def Tool(self, r, context):
        h = self._hook_at(context, r.hook, (hk.TOOL,))
        resp = pb.ToolResponse()
        try:
            resp.decision_json = json.dumps(h.fn(_ctx(context, ""), json.loads(r.event_json)) or {}).encode()
        except Exception as e:
            resp.error.CopyFrom(self._hook_error(e))
        return resp


class Diagnostics(pbg.DiagnosticsServicer):
    def Echo(self, m, context):
        return m

    def EchoStream(self, it, context):
        for m in it:
            yield m
