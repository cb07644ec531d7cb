// abkit's TypeScript SDK: write an abkit plugin for Node.js and serve it.
// The shape follows the Go SDK (sdk.Plugin, sdk.Serve) and the Python one
// (sdk/python); docs/plugins-in-other-languages.md is the wire protocol.
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

import * as grpc from "@grpc/grpc-js";
// The light build: no .proto parser. The protocol comes as the JSON
// descriptor that make proto-typescript writes (src/gen/abkit.json), which
// halves the part of a start spent on protobuf (docs/perf.md).
import * as protobuf from "protobufjs/light";

import descriptor from "./gen/abkit.json";

import type { Capabilities as CapabilitiesProto } from "./gen/abkit/v1/Capabilities";
import type { DescribeResponse } from "./gen/abkit/v1/DescribeResponse";
import type { ExtensionValue, ExtensionValue__Output } from "./gen/abkit/v1/ExtensionValue";
import type { HTTPRequest__Output } from "./gen/abkit/v1/HTTPRequest";
import type { HTTPResponse__Output } from "./gen/abkit/v1/HTTPResponse";
import type { HookResponse } from "./gen/abkit/v1/HookResponse";
import type { BodyWrite } from "./gen/abkit/v1/BodyWrite";
import type { PipelineInfo } from "./gen/abkit/v1/PipelineInfo";
import type { PluginHandlers } from "./gen/abkit/v1/Plugin";
import type { Status } from "./gen/abkit/v1/Status";
import type { Header__Output } from "./gen/abkit/v1/Header";
import type { HookError } from "./gen/abkit/v1/HookError";
import type { DescribeRequest__Output } from "./gen/abkit/v1/DescribeRequest";
import type { Empty } from "./gen/abkit/v1/Empty";
import type { FrameRequest__Output } from "./gen/abkit/v1/FrameRequest";
import type { FrameResponse } from "./gen/abkit/v1/FrameResponse";
import type { HookRequest__Output } from "./gen/abkit/v1/HookRequest";
import type { InstanceRequest__Output } from "./gen/abkit/v1/InstanceRequest";
import type { InterceptRequest__Output } from "./gen/abkit/v1/InterceptRequest";
import type { InterceptResponse } from "./gen/abkit/v1/InterceptResponse";
import type { NewInstanceRequest__Output } from "./gen/abkit/v1/NewInstanceRequest";
import type { NewInstanceResponse } from "./gen/abkit/v1/NewInstanceResponse";
import type { NotifyRequest__Output } from "./gen/abkit/v1/NotifyRequest";
import type { PartRequest__Output } from "./gen/abkit/v1/PartRequest";
import type { PartResponse } from "./gen/abkit/v1/PartResponse";
import type { ReleaseRequest__Output } from "./gen/abkit/v1/ReleaseRequest";
import type { SubmitRequest__Output } from "./gen/abkit/v1/SubmitRequest";
import type { SubmitResponse } from "./gen/abkit/v1/SubmitResponse";
import type { ToolRequest__Output } from "./gen/abkit/v1/ToolRequest";
import type { ToolResponse } from "./gen/abkit/v1/ToolResponse";

export const MAGIC_COOKIE_KEY = "ABKIT_PLUGIN_MAGIC_COOKIE";
export const MAGIC_COOKIE_VALUE = "7d1f3c5e-abkit-plugin-v1-b2a94e60";
export const PROTOCOL_VERSION = 1;
const CORE_PROTOCOL_VERSION = 1;
const SDK_VERSION = "abkit-typescript-sdk/v1";

// ---- family P ------------------------------------------------------------

export interface Action { kind: "continue" | "reject"; status: number; reason: string }
export const proceed = (): Action => ({ kind: "continue", status: 0, reason: "" });
export const reject = (status: number, reason: string): Action => ({ kind: "reject", status, reason });

export interface Capabilities {
  description?: string;
  reads_body?: boolean;
  writes_request_body?: boolean;
  writes_response_body?: boolean;
  requires?: string[];
  requires_any?: string[];
}

/** What a hook gets in place of Go's context.Context. */
export class Context {
  constructor(readonly deadline: number | null, private readonly e: string | null) {}
  /** null, "canceled" or "deadline_exceeded", as Go's ctx.Err(). */
  err(): string | null {
    if (this.e) return this.e;
    if (this.deadline !== null && Date.now() >= this.deadline) return "deadline_exceeded";
    return null;
  }
}

export type Header = Record<string, string[]>;

export class Exchange {
  request = { method: "", url: "", header: {} as Header };
  response = { status: 0, header: {} as Header };
  /** The plugin's own per-exchange state (P31). */
  state = new Map<string, unknown>();
  outcome: { kind: string; status: number; denied_by: string; reason: string } | null = null;
  requestBody: Buffer | null = null;
  responseBody: Buffer | null = null;
  ext = new Map<string, unknown>();
  phase = "";
  wReq = false;
  wResp = false;
  writes: { response: boolean; applied: boolean }[] = [];
  constructor(readonly direction: string) {}

  header(name: string): string {
    const v = this.request.header[canonical(name)];
    return v && v.length ? v[0] : "";
  }
  setRequestBody(b: Buffer): boolean { return this.write(false, b); }
  setResponseBody(b: Buffer): boolean { return this.write(true, b); }
  private write(resp: boolean, b: Buffer): boolean {
    const allowed = resp ? this.wResp : this.wReq;
    const applied = this.phase !== "finish" && allowed &&
      ((!resp && this.phase === "request") || (resp && this.phase === "response"));
    if (applied) { if (resp) this.responseBody = b; else this.requestBody = b; }
    this.writes.push({ response: resp, applied });
    return applied;
  }
  extension(key: string): unknown { return this.ext.get(key); }
  setExtension(key: string, v: unknown): void { this.ext.set(key, v); }
}

export interface PipelinePlugin {
  name?: string;
  capabilities?: Capabilities;
  onRequest(ctx: Context, ex: Exchange): Action | void;
  onResponse(ctx: Context, ex: Exchange): Action | void;
  onResponseFrame?(ctx: Context, ex: Exchange, frame: Buffer, last: boolean): Action | void;
  onFinish?(ctx: Context, ex: Exchange): string | void;
  init?(ctx: Context): string | void;
  ready?(ctx: Context): string | void;
  shutdown?(ctx: Context): string | void;
}

export interface Field { name: string; type: string; required?: boolean; description?: string; default?: unknown; enum?: string[]; fields?: Field[] }

/** A chain entry's config: its JSON, decoded. */
export type Config = Record<string, unknown> | undefined;

export interface Factory {
  /** Makes an instance from the entry's config (undefined when none); throws to refuse it. */
  new: (config: Config) => PipelinePlugin;
  config?: Field[];
}

// ---- families D and H -----------------------------------------------------

export interface Answer { decision: "continue" | "block" | "replace" | "allow" | "deny"; reason?: string; replacement?: unknown }
export interface Extension {
  manifest: { plugin_id: string; points: string[]; required?: boolean; priority?: number; slots?: string[]; timeout_seconds?: number };
  new: () => { call(ctx: Context, point: string, payload: unknown): Answer; notify?(point: string, payload: unknown): string | void };
}
export class Reject extends Error { constructor(readonly reason: string) { super(reason); } }
/**
 * A family H hook. fn gets the Go SDK's JSON shape of the value
 * (sdk/hooks.Submit, Part, ToolEvent) as a plain object: a submit hook
 * changes it in place, a part hook returns the changed part, a tool
 * reactor its decision.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the hook's own JSON shape
export interface Hook { id: string; kind: "submit" | "request_part" | "response_part" | "tool"; order?: number; policy?: string; fn: (ctx: Context, v: any) => unknown }

export interface Plugin {
  name: string;
  description: string;
  version?: string;
  pipeline?: Factory;
  extension?: Extension;
  hooks?: Hook[];
  alternatives?: Record<string, string>;
}

// ---- the server -----------------------------------------------------------

const canonCache = new Map<string, string>();
export function canonical(name: string): string {
  let c = canonCache.get(name);
  if (c === undefined) {
    c = name.split("-").map((p) => p.slice(0, 1).toUpperCase() + p.slice(1).toLowerCase()).join("-");
    canonCache.set(name, c);
  }
  return c;
}

function headerFrom(hs: Header__Output[]): Header {
  const h: Header = {};
  for (const x of hs || []) h[canonical(x.name)] = [...x.values];
  return h;
}

function panicText(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}\n\n${e.stack ?? ""}`;
  return String(e);
}

// Canonical JSON (sorted keys), to send only the extension values that changed.
function canon(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x);
}

function defaults(fields: Field[]): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.default !== undefined) m[f.name] = f.default;
    else if (f.type === "object" && f.fields?.length) m[f.name] = defaults(f.fields);
  }
  return m;
}
function sample(fields: Field[]): Record<string, unknown> {
  const ph: Record<string, unknown> = { integer: 1, number: 1, boolean: false, duration: "1s", string: "example" };
  const m: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.default !== undefined) m[f.name] = f.default;
    else if (f.enum?.length) m[f.name] = f.enum[0];
    else if (f.type === "object") m[f.name] = sample(f.fields ?? []);
    else if (f.type === "array") m[f.name] = ["example"];
    else m[f.name] = ph[f.type] ?? "example";
  }
  return m;
}

const BEHAVIOURS: [string, keyof PipelinePlugin][] = [["finish", "onFinish"], ["init", "init"], ["ready", "ready"], ["shutdown", "shutdown"], ["stream", "onResponseFrame"]];
const behaviours = (p: PipelinePlugin) => BEHAVIOURS.filter(([, m]) => typeof p[m] === "function").map(([b]) => b);

interface ExState { ex: Exchange; seen: Map<string, string> }
interface Instance { obj: PipelinePlugin; dir: string; wReq: boolean; wResp: boolean; exs: Map<string, ExState> }

function ctxOf(call: { getDeadline(): grpc.Deadline }, ctxErr: string, deadlineNs?: string | number): Context {
  let deadline: number | null = null;
  if (deadlineNs && Number(deadlineNs) !== 0) deadline = Number(BigInt(deadlineNs) / 1000000n);
  else {
    const d = call.getDeadline();
    if (d instanceof Date) deadline = d.getTime();
    else if (typeof d === "number" && isFinite(d)) deadline = d;
  }
  return new Context(deadline, ctxErr || null);
}

class Server {
  private insts = new Map<string, Instance>();
  private next = 0;
  private ext: ReturnType<Extension["new"]> | null;
  desc: DescribeResponse;
  constructor(private p: Plugin) {
    this.ext = p.extension ? p.extension.new() : null;
    this.desc = this.describe();
  }

  private make(cfg: Config): [PipelinePlugin, string, Capabilities] {
    const obj = this.p.pipeline!.new(cfg);
    if (!obj) throw new Error("factory returned no instance");
    const caps: Capabilities = { ...(obj.capabilities ?? {}) };
    if (!caps.description) caps.description = this.p.description;
    return [obj, obj.name || this.p.name, caps];
  }

  private capsProto(name: string, c: Capabilities): CapabilitiesProto {
    return { name, description: c.description ?? "", reads_body: !!c.reads_body, writes_request_body: !!c.writes_request_body,
      writes_response_body: !!c.writes_response_body, requires: c.requires ?? [], requires_any: c.requires_any ?? [] };
  }

  private describe(): DescribeResponse {
    const p = this.p;
    const families = [["P", p.pipeline], ["D", p.extension], ["H", p.hooks]].filter(([, v]) => v).map(([f]) => f);
    const hooks: NonNullable<DescribeResponse["hooks"]> = [];
    const d: DescribeResponse = { name: p.name, description: p.description, version: p.version ?? "", families: families as string[], sdk: SDK_VERSION,
      alternatives: p.alternatives ?? {}, hooks };
    if (p.pipeline) {
      const schema = p.pipeline.config;
      const info: PipelineInfo = { behaviours: [], observed: [] };
      if (schema?.length) info.config_schema_json = Buffer.from(JSON.stringify({ fields: schema }));
      const cfgs: Config[] = [undefined];
      if (schema?.length) cfgs.push(defaults(schema), sample(schema));
      let first: unknown = null;
      let insts: [PipelinePlugin, string, Capabilities][] | null = null;
      for (const c of cfgs) {
        try { insts = [this.make(c), this.make(c)]; break; } catch (e) { first = first ?? e; }
      }
      if (!insts) info.probe_error = String(first instanceof Error ? first.message : first);
      else {
        info.capabilities = this.capsProto(insts[0][1], insts[0][2]);
        info.behaviours = behaviours(insts[0][0]);
        info.observed = insts.map(([, n, c]) => this.capsProto(n, c));
      }
      d.pipeline = info;
    }
    if (p.extension) {
      const m = p.extension.manifest;
      d.extension = { plugin_id: m.plugin_id, points: m.points, required: !!m.required, priority: m.priority ?? 0,
        slots: m.slots ?? [], timeout_ns: Math.round((m.timeout_seconds ?? 0) * 1e9) };
    }
    (p.hooks ?? []).forEach((h, i) => hooks.push({ id: h.id, order: h.order ?? 0, policy: h.policy ?? "", kind: h.kind, index: i }));
    return d;
  }

  private inst(id: string): Instance {
    const i = this.insts.get(String(id));
    if (!i) throw Object.assign(new Error(this.p.pipeline ? `plugin "${this.p.name}" has no instance ${id}` : `plugin "${this.p.name}" serves no pipeline (family P)`),
      { code: this.p.pipeline ? grpc.status.NOT_FOUND : grpc.status.UNIMPLEMENTED });
    return i;
  }

  private state(i: Instance, id: string, dir: string): ExState {
    let st = i.exs.get(id);
    if (!st) { st = { ex: new Exchange(dir || i.dir), seen: new Map() }; i.exs.set(id, st); }
    return st;
  }

  private apply(st: ExState, req: HTTPRequest__Output | null, resp: HTTPResponse__Output | null, exts: ExtensionValue__Output[]) {
    const ex = st.ex;
    if (req) {
      ex.request.method = req.method; ex.request.url = req.url; ex.request.header = headerFrom(req.header);
      if (req.has_body) ex.requestBody = Buffer.from(req.body);
    }
    if (resp) {
      ex.response.status = resp.status; ex.response.header = headerFrom(resp.header);
      if (resp.has_body) ex.responseBody = Buffer.from(resp.body);
    }
    for (const e of exts || []) {
      let v: unknown;
      try { v = JSON.parse(Buffer.from(e.json).toString()); } catch { continue; }
      ex.ext.set(e.key, v);
      st.seen.set(e.key, canon(v));
    }
  }

  private collect(st: ExState): { writes: BodyWrite[]; extensions: ExtensionValue[] } {
    const ex = st.ex;
    const writes = ex.writes.map((w) => ({ response: w.response, applied: w.applied,
      body: w.applied ? (w.response ? ex.responseBody : ex.requestBody) ?? Buffer.alloc(0) : Buffer.alloc(0) }));
    ex.writes = [];
    const extensions: ExtensionValue[] = [];
    for (const [k, v] of ex.ext) {
      let b: string;
      try { b = canon(v); } catch (e) { b = JSON.stringify(`extension "${k}" does not encode to JSON: ${e}`); }
      if (st.seen.get(k) === b) continue;
      st.seen.set(k, b);
      extensions.push({ key: k, json: Buffer.from(b) });
    }
    return { writes, extensions };
  }

  handlers(): PluginHandlers {
    // Every call's request and answer are the generated types of abkit.proto
    // (src/gen, make proto-typescript): tsc checks each field.
    function unary<Req, Res>(f: (r: Req, call: grpc.ServerUnaryCall<Req, Res>) => Res): grpc.handleUnaryCall<Req, Res> {
      return (call, cb) => {
        try { cb(null, f(call.request, call)); } catch (e) { cb(grpcError(e)); }
      };
    }
    const lifecycle = (m: "init" | "ready" | "shutdown") => unary<InstanceRequest__Output, Status>((r, call) => {
      const i = this.inst(r.instance);
      const fn = i.obj[m];
      if (typeof fn !== "function") return {};
      try { return { error: fn.call(i.obj, ctxOf(call, "")) || "" }; } catch (e) { return { error: "panic: " + panicText(e) }; }
    });
    const hook = (phase: string) => unary<HookRequest__Output, HookResponse>((r, call) => {
      const i = this.inst(r.instance);
      const st = this.state(i, String(r.exchange), r.direction);
      try {
        this.apply(st, r.request, r.response, r.extensions);
        if (r.outcome) st.ex.outcome = r.outcome;
        st.ex.phase = phase; st.ex.wReq = i.wReq; st.ex.wResp = i.wResp; st.ex.writes = [];
        const ctx = ctxOf(call, r.ctx_err);
        let act: Action | void = proceed(), herr = "", panic = "";
        try {
          if (phase === "request") act = i.obj.onRequest(ctx, st.ex);
          else if (phase === "response") act = i.obj.onResponse(ctx, st.ex);
          else if (i.obj.onFinish) herr = i.obj.onFinish(ctx, st.ex) || "";
        } catch (e) { panic = panicText(e); }
        const a = act || proceed();
        return { action: a, ...this.collect(st), error: panic || herr, panicked: !!panic };
      } finally {
        if (r.final) i.exs.delete(String(r.exchange));
      }
    });
    const noExtension = () => Object.assign(new Error(`plugin "${this.p.name}" serves no extension (family D)`), { code: grpc.status.UNIMPLEMENTED });
    return {
      Describe: unary<DescribeRequest__Output, DescribeResponse>(() => this.desc),
      NewInstance: unary<NewInstanceRequest__Output, NewInstanceResponse>((r) => {
        if (!this.p.pipeline) throw Object.assign(new Error(`plugin "${this.p.name}" serves no pipeline (family P)`), { code: grpc.status.UNIMPLEMENTED });
        let made: [PipelinePlugin, string, Capabilities];
        try { made = this.make(r.config_json?.length ? JSON.parse(Buffer.from(r.config_json).toString()) : undefined); } catch (e) {
          return { error: e instanceof Error ? e.message : String(e) };
        }
        const [obj, name, caps] = made;
        const id = String(++this.next);
        this.insts.set(id, { obj, dir: r.direction || "inbound", wReq: !!caps.writes_request_body, wResp: !!caps.writes_response_body, exs: new Map() });
        return { instance: id, capabilities: this.capsProto(name, caps), behaviours: behaviours(obj) };
      }),
      Init: lifecycle("init"), Ready: lifecycle("ready"), Shutdown: lifecycle("shutdown"),
      OnRequest: hook("request"), OnResponse: hook("response"), Finish: hook("finish"),
      Release: unary<ReleaseRequest__Output, Empty>((r) => { const i = this.inst(r.instance); for (const x of r.exchanges) i.exs.delete(String(x)); return {}; }),
      Frames: (call: grpc.ServerDuplexStream<FrameRequest__Output, FrameResponse>) => {
        let i: Instance | null = null, st: ExState | null = null, id = "";
        call.on("data", (r: FrameRequest__Output) => {
          try {
            if (!i) {
              i = this.inst(r.instance);
              if (typeof i.obj.onResponseFrame !== "function") {
                call.emit("error", { code: grpc.status.FAILED_PRECONDITION, details: `plugin "${this.p.name}" does not stream responses` });
                return;
              }
              id = String(r.exchange); st = this.state(i, id, "");
            }
            this.apply(st!, null, r.response, r.extensions);
            st!.ex.phase = "frame"; st!.ex.wReq = i.wReq; st!.ex.wResp = i.wResp; st!.ex.writes = [];
            let act: Action | void = proceed(), panic = "";
            try { act = i.obj.onResponseFrame!(ctxOf(call, r.ctx_err, r.deadline_unix_nano), st!.ex, Buffer.from(r.frame), r.last); } catch (e) { panic = panicText(e); }
            const out: FrameResponse = { action: act || proceed(), ...this.collect(st!), error: panic, panicked: !!panic };
            if (r.final) i.exs.delete(id);
            call.write(out);
          } catch (e) {
            call.emit("error", grpcError(e));
          }
        });
        call.on("end", () => call.end());
      },
      Intercept: unary<InterceptRequest__Output, InterceptResponse>((r, call) => {
        if (!this.ext) throw noExtension();
        try {
          const a = this.ext.call(ctxOf(call, ""), r.point, r.payload_json?.length ? JSON.parse(Buffer.from(r.payload_json).toString()) : null);
          return { decision: a.decision, reason: a.reason ?? "", replacement_json: a.replacement === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(a.replacement)) };
        } catch (e) { return { error: "panic: " + panicText(e) }; }
      }),
      Notify: unary<NotifyRequest__Output, Status>((r) => {
        if (!this.ext) throw noExtension();
        try { return { error: this.ext.notify?.(r.point, r.payload_json?.length ? JSON.parse(Buffer.from(r.payload_json).toString()) : null) || "" }; } catch (e) { return { error: "panic: " + panicText(e) }; }
      }),
      Submit: unary<SubmitRequest__Output, SubmitResponse>((r, call) => {
        const { out, error } = this.hookCall(r.hook, ["submit"], call, r.submit_json, true);
        return { submit_json: out, error };
      }),
      Part: unary<PartRequest__Output, PartResponse>((r, call) => {
        const { out, error } = this.hookCall(r.hook, ["request_part", "response_part"], call, r.part_json, false);
        return error ? { error } : { part_json: out };
      }),
      Tool: unary<ToolRequest__Output, ToolResponse>((r, call) => {
        const { out, error } = this.hookCall(r.hook, ["tool"], call, r.event_json, false);
        return error ? { error } : { decision_json: out };
      }),
    };
  }

  // hookCall runs hook idx on the JSON value: its answer (for a submit, the
  // value as the hook changed it, also when it rejects) or its error.
  private hookCall(idx: number, kinds: string[], call: { getDeadline(): grpc.Deadline }, json: Buffer, inPlace: boolean): { out?: Buffer; error?: HookError } {
    const h = (this.p.hooks ?? [])[idx];
    if (!h) throw Object.assign(new Error(`plugin "${this.p.name}" has no hook ${idx}`), { code: grpc.status.NOT_FOUND });
    if (!kinds.includes(h.kind)) throw Object.assign(new Error(`hook "${h.id}" is a ${h.kind} hook`), { code: grpc.status.INVALID_ARGUMENT });
    const v = JSON.parse(Buffer.from(json).toString());
    try {
      const out = h.fn(ctxOf(call, ""), v);
      return { out: Buffer.from(JSON.stringify(inPlace ? v : out ?? {})) };
    } catch (e) {
      const error: HookError = e instanceof Reject ? { kind: "reject", message: e.reason } : { kind: "error", message: panicText(e), panicked: true };
      return inPlace ? { out: Buffer.from(JSON.stringify(v)), error } : { error };
    }
  }
}

/** A thrown value as a gRPC error: its code when it has one, else INTERNAL. */
function grpcError(e: unknown): Partial<grpc.StatusObject> {
  const code = typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "number" ? (e as { code: number }).code : grpc.status.INTERNAL;
  return { code, details: e instanceof Error ? e.message : String(e) };
}

// ---- go-plugin's side -----------------------------------------------------

const CERT_DAYS = 7;
const CERT_REUSE_MS = 6 * 24 * 3600 * 1000;

/** A self-signed P-256 certificate for localhost, made with the openssl command line (Node has no certificate encoder). */
export function makeCertificate(): { cert: Buffer; key: Buffer } {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "abkit-cert-"));
  try {
    const cert = path.join(d, "cert.pem"), key = path.join(d, "key.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", key, "-out", cert, "-days", String(CERT_DAYS), "-subj", "/O=abkit/CN=localhost",
      "-addext", "subjectAltName=DNS:localhost", "-addext", "basicConstraints=critical,CA:TRUE",
      "-addext", "keyUsage=critical,digitalSignature,keyCertSign", "-addext", "extendedKeyUsage=clientAuth,serverAuth"],
      { stdio: ["ignore", "ignore", "pipe"] });
    return { cert: fs.readFileSync(cert), key: fs.readFileSync(key) };
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
}

/** The user's cache directory for abkit, as Go's os.UserCacheDir. */
function cacheDir(): string {
  let base = "";
  if (process.platform === "win32") base = process.env.LOCALAPPDATA ?? "";
  else if (process.platform === "darwin") base = path.join(os.homedir(), "Library", "Caches");
  else base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return base ? path.join(base, "abkit") : "";
}

/**
 * The plugin's certificate and key: from the per-user cache when one was
 * made in the last 6 days, else made now and cached, so that a start runs
 * no openssl (docs/perf.md). The file is the user's own (0600 in a 0700
 * directory), as is the process holding the key; the host pins the
 * certificate the handshake line names, so sharing it between plugins only
 * saves time. ABKIT_PLUGIN_CERT_CACHE=0 makes a fresh one every start.
 */
export function pluginCertificate(): { cert: Buffer; key: Buffer } {
  const off = ["0", "false"].includes(process.env.ABKIT_PLUGIN_CERT_CACHE ?? "");
  const dir = off ? "" : cacheDir();
  const file = dir ? path.join(dir, `plugin-tls-${typeof process.getuid === "function" ? process.getuid() : "user"}.pem`) : "";
  if (file) {
    try {
      const st = fs.statSync(file);
      if (Date.now() - st.mtimeMs < CERT_REUSE_MS && (process.platform === "win32" || (st.mode & 0o077) === 0)) {
        const b = fs.readFileSync(file);
        const i = b.indexOf("-----BEGIN CERTIFICATE-----");
        if (i > 0) return { cert: b.subarray(i), key: b.subarray(0, i) };
      }
    } catch { /* not cached yet */ }
  }
  const made = makeCertificate();
  if (file) {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, Buffer.concat([made.key, made.cert]), { mode: 0o600 });
      fs.renameSync(tmp, file);
    } catch { /* the cache only saves time */ }
  }
  return made;
}

function der(pem: Buffer): Buffer {
  const s = pem.toString().split("-----BEGIN CERTIFICATE-----")[1].split("-----END CERTIFICATE-----")[0];
  return Buffer.from(s.replace(/\s+/g, ""), "base64");
}

// The protocol's services as grpc-js definitions, built from the JSON
// descriptor with protobufjs's light build. The messages decode as
// proto-loader's loadSync would with keepCase, longs and enums as String and
// defaults, which is what the generated types (src/gen) describe.
const decodeOptions: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true };

let protocolRoot: protobuf.Root | null = null;

/** The grpc-js definition of one of abkit.proto's services ("abkit.v1.Plugin"). */
export function serviceDefinition(service: string): grpc.ServiceDefinition {
  const root = (protocolRoot ??= protobuf.Root.fromJSON(descriptor as protobuf.INamespace));
  const svc = root.lookupService(service);
  const def: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const m of svc.methodsArray) {
    m.resolve();
    const req = m.resolvedRequestType!, res = m.resolvedResponseType!;
    def[m.name] = {
      path: `/${service}/${m.name}`, requestStream: !!m.requestStream, responseStream: !!m.responseStream, originalName: m.name,
      requestSerialize: (o: object) => Buffer.from(req.encode(req.fromObject(o)).finish()),
      requestDeserialize: (b: Buffer) => req.toObject(req.decode(b), decodeOptions),
      responseSerialize: (o: object) => Buffer.from(res.encode(res.fromObject(o)).finish()),
      responseDeserialize: (b: Buffer) => res.toObject(res.decode(b), decodeOptions),
    };
  }
  return def;
}

const raw = { path: "", requestStream: false, responseStream: false, requestSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b };

/** Serve p to the abkit host that started this process; exits when the host stops it. */
export function serve(p: Plugin): void {
  const debug = !["", "0", "false"].includes(process.env.ABKIT_PLUGIN_DEBUG ?? "");
  if (!debug && process.env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) {
    process.stderr.write("This binary is a plugin. These are not meant to be executed directly.\n" +
      "Please execute the program that consumes these plugins, which will\nload any plugins automatically\n");
    process.exit(1);
  }
  const offered = (process.env.PLUGIN_PROTOCOL_VERSIONS ?? String(PROTOCOL_VERSION)).split(",");
  if (!debug && !offered.includes(String(PROTOCOL_VERSION))) {
    process.stderr.write(`abkit plugin: the host offers protocol versions ${offered.join(",")}; this SDK serves ${PROTOCOL_VERSION}\n`);
    process.exit(1);
  }
  const impl = new Server(p);
  const server = new grpc.Server();
  server.addService(serviceDefinition("abkit.v1.Plugin"), impl.handlers());
  server.addService(serviceDefinition("abkit.v1.Diagnostics"), {
    Echo: (call: any, cb: any) => cb(null, call.request),
    EchoStream: (call: any) => { call.on("data", (m: any) => call.write(m)); call.on("end", () => call.end()); },
  });
  const stop = () => server.tryShutdown(() => process.exit(0));
  // go-plugin's controller (without it every stop waits 500 ms, then a kill) and health.
  server.addService({ Shutdown: { ...raw, path: "/plugin.GRPCController/Shutdown" } } as any, {
    Shutdown: (_c: any, cb: any) => { cb(null, Buffer.alloc(0)); setImmediate(stop); },
  });
  server.addService({ Check: { ...raw, path: "/grpc.health.v1.Health/Check" } } as any, {
    Check: (_c: any, cb: any) => cb(null, Buffer.from([0x08, 0x01])),
  });
  const dir = fs.mkdtempSync(path.join(process.env.PLUGIN_UNIX_SOCKET_DIR || os.tmpdir(), "plugin"));
  // No Unix sockets for gRPC on Windows: TCP on loopback there, as go-plugin does.
  const network = process.platform === "win32" ? "tcp" : "unix";
  let addr = network === "unix" ? path.join(dir, "plugin.sock") : "127.0.0.1:0";
  let certField = "";
  let creds = grpc.ServerCredentials.createInsecure();
  const hostCert = process.env.PLUGIN_CLIENT_CERT;
  if (hostCert && !debug) {
    const { cert, key } = pluginCertificate();
    creds = grpc.ServerCredentials.createSsl(Buffer.from(hostCert), [{ private_key: key, cert_chain: cert }], true);
    certField = der(cert).toString("base64").replace(/=+$/, ""); // go-plugin: RawStdEncoding, no padding
  }
  process.on("SIGTERM", stop);
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  server.bindAsync(network === "unix" ? "unix:" + addr : addr, creds, (err, port) => {
    if (err) { process.stderr.write(`abkit plugin "${p.name}": listen: ${err.message}\n`); process.exit(1); }
    if (network === "tcp") addr = `127.0.0.1:${port}`;
    if (debug) {
      process.on("SIGINT", stop);
      process.stderr.write(`abkit plugin "${p.name}": debug mode (ABKIT_PLUGIN_DEBUG): the reattach config is on stdout\n`);
      process.stdout.write(JSON.stringify({ Protocol: "grpc", ProtocolVersion: PROTOCOL_VERSION, Addr: { Network: network, String: addr }, Pid: process.pid, Test: true }) + "\n");
    } else {
      process.on("SIGINT", () => {}); // the host stops us through the controller
      process.stdout.write(`${CORE_PROTOCOL_VERSION}|${PROTOCOL_VERSION}|${network}|${addr}|grpc|${certField}\n`);
    }
  });
}

/**
 * Runs `conformance run` on the plugin in script under this Node (the
 * counterpart of the Go SDK's sdk/conformancetest) and returns the JSON
 * report; it throws on any counted failure. The conformance program is
 * $ABKIT_CONFORMANCE or conformance in PATH.
 */
export function runConformance(script: string, ...args: string[]): any {
  const prog = process.env.ABKIT_CONFORMANCE || "conformance";
  let out: string;
  try {
    out = execFileSync(prog, ["run", "--plugin", process.execPath, "--plugin-arg", path.resolve(script), "-o", "json", ...args],
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e: any) {
    if (e.status !== 1 || !e.stdout) throw new Error(`conformance on ${script}: ${e.stderr || e.message}`);
    out = e.stdout;
  }
  const rep = JSON.parse(out);
  const bad = (rep.results || []).filter((r: any) => r.status === "fail" || r.status === "fixed");
  if (bad.length) throw new Error(`conformance on ${script}:\n` + bad.map((r: any) => `${r.id}: ${r.status}: ${r.summary}`).join("\n"));
  return rep;
}
