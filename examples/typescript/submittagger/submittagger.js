#!/usr/bin/env node
// abkit-plugin: dir: sources start this script (docs/catalog.md)
// submit-tagger: a family H hook in JavaScript on the TypeScript SDK. Tags every submit's metadata
// and rejects a submit with no model.
const abkit = require("../../../sdk/typescript/dist");

abkit.serve({
  name: "ts-submit-tagger",
  description: "Tags submits and rejects those without a model",
  version: "1.0.0",
  hooks: [{
    id: "ts-submit-tagger",
    kind: "submit",
    order: 10,
    fn(ctx, submit) {
      if (!submit.model) throw new abkit.Reject("submit names no model");
      submit.metadata = { ...(submit.metadata || {}), "tagged-by": "ts-submit-tagger" };
    },
  }],
});
