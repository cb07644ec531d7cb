#!/usr/bin/env node
// abkit-plugin: dir: sources start this script (docs/catalog.md)
// pass-through: the smallest family P plugin in TypeScript/JavaScript; lets every exchange through.
// The SDK from this repository (build it with: cd sdk/typescript && npm ci && npm run build).
const abkit = require("../../../sdk/typescript/dist");

abkit.serve({
  name: "ts-pass-through",
  description: "Lets every exchange through unchanged",
  version: "1.0.0",
  pipeline: {
    new: () => ({
      onRequest: () => abkit.proceed(),
      onResponse: () => abkit.proceed(),
    }),
  },
});
