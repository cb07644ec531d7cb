// abkit's TypeScript SDK: write an abkit plugin for Node.js and serve it.
// The shape follows the Go SDK (sdk.Plugin, sdk.Serve) and the Python one
// (sdk/python); docs/plugins-in-other-languages.md is the wire protocol.
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

import type { DescribeResponse } from "./gen/abkit/v1/DescribeResponse";
import type { PluginHandlers } from "./gen/abkit/v1/Plugin";

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

export interface Factory {
  /** Makes an instance from the entry's config (undefined when none); throws to refuse it. */
  new: (config: any) => PipelinePlugin;
  config?: Field[];
}

// ---- families D and H -----------------------------------------------------

export interface Answer { decision: "continue" | "block" | "replace" | "allow" | "deny"; reason?: string; replacement?: unknown }
export interface Extension {
  manifest: { plugin_id: string; points: string[]; required?: boolean; priority?: number; slots?: string[]; timeout_seconds?: number };
  new: () => { call(ctx: Context, point: string, payload: any): Answer; notify?(point: string, payload: any): string | void };
}
export class Reject extends Error { constructor(readonly reason: string) { super(reason); } }
export interface Hook { id: string; kind: "submit" | "request_part" | "response_part" | "tool"; order?: number; policy?: string; fn: (ctx: Context, v: any) => any }

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

function headerFrom(hs: { name: string; values: string[] }[]): Header {
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
  desc: any;
  constructor(private p: Plugin) {
    this.ext = p.extension ? p.extension.new() : null;
    this.desc = this.describe();
  }

  private make(cfg: any): [PipelinePlugin, string, Capabilities] {
    const obj = this.p.pipeline!.new(cfg);
    if (!obj) throw new Error("factory returned no instance");
    const caps: Capabilities = { ...(obj.capabilities ?? {}) };
    if (!caps.description) caps.description = this.p.description;
    return [obj, obj.name || this.p.name, caps];
  }

  private capsProto(name: string, c: Capabilities) {
    return { name, description: c.description ?? "", reads_body: !!c.reads_body, writes_request_body: !!c.writes_request_body,
      writes_response_body: !!c.writes_response_body, requires: c.requires ?? [], requires_any: c.requires_any ?? [] };
  }

  private describe(): DescribeResponse {
    const p = this.p;
    const families = [["P", p.pipeline], ["D", p.extension], ["H", p.hooks]].filter(([, v]) => v).map(([f]) => f);
    const d: any = { name: p.name, description: p.description, version: p.version ?? "", families, sdk: SDK_VERSION,
      alternatives: p.alternatives ?? {}, hooks: [] };
    if (p.pipeline) {
      const schema = p.pipeline.config;
      const info: any = { behaviours: [], observed: [] };
      if (schema?.length) info.config_schema_json = Buffer.from(JSON.stringify({ fields: schema }));
      const cfgs: any[] = [undefined];
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
    (p.hooks ?? []).forEach((h, i) => d.hooks.push({ id: h.id, order: h.order ?? 0, policy: h.policy ?? "", kind: h.kind, index: i }));
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

  private apply(st: ExState, req: any, resp: any, exts: any[]) {
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

  private collect(st: ExState) {
    const ex = st.ex;
    const writes = ex.writes.map((w) => ({ response: w.response, applied: w.applied,
      body: w.applied ? (w.response ? ex.responseBody : ex.requestBody) ?? Buffer.alloc(0) : Buffer.alloc(0) }));
    ex.writes = [];
    const extensions: any[] = [];
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
    const unary = (f: (r: any, call: any) => any) => (call: any, cb: grpc.sendUnaryData<any>) => {
      try { cb(null, f(call.request, call)); } catch (e: any) { cb({ code: e.code ?? grpc.status.INTERNAL, details: e.message }); }
    };
    const lifecycle = (m: "init" | "ready" | "shutdown") => unary((r, call) => {
      const i = this.inst(r.instance);
      const fn = i.obj[m];
      if (typeof fn !== "function") return {};
      try { return { error: fn.call(i.obj, ctxOf(call, "")) || "" }; } catch (e) { return { error: "panic: " + panicText(e) }; }
    });
    const hook = (phase: string) => unary((r, call) => {
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
    return {
      Describe: unary(() => this.desc),
      NewInstance: unary((r) => {
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
      Release: unary((r) => { const i = this.inst(r.instance); for (const x of r.exchanges) i.exs.delete(String(x)); return {}; }),
      Frames: (call: grpc.ServerDuplexStream<any, any>) => {
        let i: Instance | null = null, st: ExState | null = null, id = "";
        call.on("data", (r: any) => {
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
            const out = { action: act || proceed(), ...this.collect(st!), error: panic, panicked: !!panic };
            if (r.final) i.exs.delete(id);
            call.write(out);
          } catch (e: any) {
            call.emit("error", { code: e.code ?? grpc.status.INTERNAL, details: e.message });
          }
        });
        call.on("end", () => call.end());
      },
      Intercept: unary((r, call) => {
        if (!this.ext) throw Object.assign(new Error(`plugin "${this.p.name}" serves no extension (family D)`), { code: grpc.status.UNIMPLEMENTED });
        try {
          const a = this.ext.call(ctxOf(call, ""), r.point, r.payload_json?.length ? JSON.parse(Buffer.from(r.payload_json).toString()) : null);
          return { decision: a.decision, reason: a.reason ?? "", replacement_json: a.replacement === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(a.replacement)) };
        } catch (e) { return { error: "panic: " + panicText(e) }; }
      }),
      Notify: unary((r) => {
        if (!this.ext) throw Object.assign(new Error(`plugin "${this.p.name}" serves no extension (family D)`), { code: grpc.status.UNIMPLEMENTED });
        try { return { error: this.ext.notify?.(r.point, r.payload_json?.length ? JSON.parse(Buffer.from(r.payload_json).toString()) : null) || "" }; } catch (e) { return { error: "panic: " + panicText(e) }; }
      }),
      Submit: unary((r, call) => this.hookCall(r.hook, ["submit"], call, r.submit_json, "submit_json", true)),
      Part: unary((r, call) => this.hookCall(r.hook, ["request_part", "response_part"], call, r.part_json, "part_json", false)),
      Tool: unary((r, call) => this.hookCall(r.hook, ["tool"], call, r.event_json, "decision_json", false)),
    };
  }

  private hookCall(idx: number, kinds: string[], call: any, json: Buffer, outKey: string, inPlace: boolean) {
    const h = (this.p.hooks ?? [])[idx];
    if (!h) throw Object.assign(new Error(`plugin "${this.p.name}" has no hook ${idx}`), { code: grpc.status.NOT_FOUND });
    if (!kinds.includes(h.kind)) throw Object.assign(new Error(`hook "${h.id}" is a ${h.kind} hook`), { code: grpc.status.INVALID_ARGUMENT });
    const v = JSON.parse(Buffer.from(json).toString());
    try {
      const out = h.fn(ctxOf(call, ""), v);
      return { [outKey]: Buffer.from(JSON.stringify(inPlace ? v : out ?? {})) };
    } catch (e) {
      const error = e instanceof Reject ? { kind: "reject", message: e.reason } : { kind: "error", message: panicText(e), panicked: true };
      return inPlace ? { [outKey]: Buffer.from(JSON.stringify(v)), error } : { error };
    }
  }
}

// ---- go-plugin's side -----------------------------------------------------

/** A self-signed P-256 certificate for localhost, made with the openssl command line (Node has no certificate encoder). */
export function makeCertificate(): { cert: Buffer; key: Buffer } {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "abkit-cert-"));
  try {
    const cert = path.join(d, "cert.pem"), key = path.join(d, "key.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", key, "-out", cert, "-days", "1", "-subj", "/O=abkit/CN=localhost",
      "-addext", "subjectAltName=DNS:localhost", "-addext", "basicConstraints=critical,CA:TRUE",
      "-addext", "keyUsage=critical,digitalSignature,keyCertSign", "-addext", "extendedKeyUsage=clientAuth,serverAuth"],
      { stdio: ["ignore", "ignore", "pipe"] });
    return { cert: fs.readFileSync(cert), key: fs.readFileSync(key) };
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
}

function der(pem: Buffer): Buffer {
  const s = pem.toString().split("-----BEGIN CERTIFICATE-----")[1].split("-----END CERTIFICATE-----")[0];
  return Buffer.from(s.replace(/\s+/g, ""), "base64");
}

function protoPath(): string {
  if (process.env.ABKIT_PROTO) return process.env.ABKIT_PROTO;
  const bundled = path.join(__dirname, "..", "proto", "abkit", "v1", "abkit.proto");
  if (fs.existsSync(bundled)) return bundled;
  return path.join(__dirname, "..", "..", "..", "proto", "abkit", "v1", "abkit.proto");
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
  const def = protoLoader.loadSync(protoPath(), { keepCase: true, longs: String, enums: String, defaults: true });
  const pkg: any = grpc.loadPackageDefinition(def).abkit;
  const impl = new Server(p);
  const server = new grpc.Server();
  server.addService(pkg.v1.Plugin.service, impl.handlers());
  server.addService(pkg.v1.Diagnostics.service, {
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
    const { cert, key } = makeCertificate();
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
