#!/usr/bin/env node
// abkit-plugin: dir: sources start this script (docs/catalog.md)
// tool-policy: a family D extension in JavaScript on the TypeScript SDK. Blocks listed tools at
// tool.before and denies them at permission.decision.
const abkit = require("../../../sdk/typescript/dist");

const BLOCKED = new Set(["shell", "rm"]);

abkit.serve({
  name: "ts-tool-policy",
  description: "Blocks listed tools before they run",
  version: "1.0.0",
  extension: {
    manifest: { plugin_id: "ts-tool-policy", points: ["tool.before", "permission.decision", "session.start"] },
    new: () => ({
      call(ctx, point, payload) {
        const name = payload && typeof payload === "object" ? payload.name || "" : "";
        if (point === "tool.before" && BLOCKED.has(name)) return { decision: "block", reason: `tool ${name} is not allowed` };
        if (point === "permission.decision" && BLOCKED.has(name)) return { decision: "deny", reason: `tool ${name} is not allowed` };
        return { decision: "continue" };
      },
      notify() {},
    }),
  },
});
