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
