// The TypeScript SDK's own tests (node --test test/): the host's body-write
// rules, header lookup, and the conformance helper on an example.
const test = require("node:test");
const assert = require("node:assert");
const path = require("path");
const abkit = require("../dist");

test("body writes follow the host's rules (P17, P30)", () => {
  const ex = new abkit.Exchange("inbound");
  ex.phase = "request"; ex.wReq = true;
  assert.strictEqual(ex.setRequestBody(Buffer.from("x")), true);
  assert.strictEqual(ex.setResponseBody(Buffer.from("y")), false);
  ex.phase = "finish";
  assert.strictEqual(ex.setRequestBody(Buffer.from("z")), false);
  assert.deepStrictEqual(ex.writes.map((w) => w.applied), [true, false, false]);
  assert.strictEqual(ex.requestBody.toString(), "x");
});

test("headers are keyed as Go's", () => {
  assert.strictEqual(abkit.canonical("content-type"), "Content-Type");
  const ex = new abkit.Exchange("inbound");
  ex.request.header = { "X-Api-Version": ["2"] };
  assert.strictEqual(ex.header("x-api-version"), "2");
});

test("a deadline or the host's cancel shows in ctx.err()", () => {
  assert.strictEqual(new abkit.Context(null, "canceled").err(), "canceled");
  assert.strictEqual(new abkit.Context(Date.now() - 1, null).err(), "deadline_exceeded");
  assert.strictEqual(new abkit.Context(null, null).err(), null);
});

test("runConformance passes an example", { skip: !process.env.ABKIT_CONFORMANCE && "ABKIT_CONFORMANCE not set" }, () => {
  const rep = abkit.runConformance(path.join(__dirname, "..", "..", "..", "examples", "typescript", "submittagger", "submittagger.js"),
    "--isolation", "suite");
  assert.ok(rep.results.some((r) => r.status === "pass"));
});

test("the certificate is cached per user, private, and can be turned off", () => {
  const fs = require("fs"), os = require("os");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "abkit-test-"));
  const saved = { x: process.env.XDG_CACHE_HOME, c: process.env.ABKIT_PLUGIN_CERT_CACHE };
  try {
    process.env.XDG_CACHE_HOME = dir;
    delete process.env.ABKIT_PLUGIN_CERT_CACHE;
    const a = abkit.pluginCertificate(), b = abkit.pluginCertificate();
    assert.ok(a.cert.toString().startsWith("-----BEGIN CERTIFICATE-----"));
    assert.ok(a.key.toString().includes("PRIVATE KEY"));
    assert.deepStrictEqual(b.cert, a.cert);
    const file = fs.readdirSync(path.join(dir, "abkit")).find((f) => f.startsWith("plugin-tls-"));
    if (process.platform !== "win32") assert.strictEqual(fs.statSync(path.join(dir, "abkit", file)).mode & 0o077, 0);
    process.env.ABKIT_PLUGIN_CERT_CACHE = "0";
    assert.notDeepStrictEqual(abkit.pluginCertificate().cert, a.cert);
  } finally {
    for (const [k, v] of [["XDG_CACHE_HOME", saved.x], ["ABKIT_PLUGIN_CERT_CACHE", saved.c]]) {
      if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the service definitions decode as proto-loader's would", () => {
  const def = abkit.serviceDefinition("abkit.v1.Plugin");
  const m = def.OnRequest;
  assert.strictEqual(m.path, "/abkit.v1.Plugin/OnRequest");
  const r = m.requestDeserialize(m.requestSerialize({ instance: "7", exchange: "9", request: { method: "POST", has_body: true, body: Buffer.from("x") } }));
  assert.strictEqual(r.instance, "7"); // longs as strings
  assert.strictEqual(r.request.method, "POST");
  assert.strictEqual(Buffer.from(r.request.body).toString(), "x");
  assert.strictEqual(r.ctx_err, ""); // defaults
  assert.deepStrictEqual(r.extensions, []);
  assert.ok(def.Frames.requestStream && def.Frames.responseStream);
});
