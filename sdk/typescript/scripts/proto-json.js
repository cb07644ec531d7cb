// Writes the JSON descriptor of abkit.proto that the SDK loads at run time
// with protobufjs's light build (no .proto parser at start; docs/perf.md):
//   node scripts/proto-json.js ../../proto/abkit/v1/abkit.proto src/gen/abkit.json
// make proto-typescript runs it; TestTypeScriptTypesCurrent checks the output.
const fs = require("fs");
const protobuf = require("protobufjs");

const [src, out] = process.argv.slice(2);
if (!src || !out) {
  process.stderr.write("usage: node scripts/proto-json.js PROTO OUT.json\n");
  process.exit(2);
}
const root = new protobuf.Root();
root.loadSync(src, { keepCase: true });
fs.writeFileSync(out, JSON.stringify(root.toJSON(), null, 1) + "\n");
