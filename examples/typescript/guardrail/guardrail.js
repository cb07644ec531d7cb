#!/usr/bin/env node
// abkit-plugin: dir: sources start this script (docs/catalog.md)
// guardrail: a family P plugin in JavaScript on the TypeScript SDK. Rejects requests whose body names a
// blocked word, and counts blocked words in streamed response frames ("guardrail" extension).
const abkit = require("../../../sdk/typescript/dist");

function hits(words, data) {
  const low = (data || Buffer.alloc(0)).toString("latin1").toLowerCase();
  return words.reduce((n, w) => n + low.split(w).length - 1, 0);
}

function guardrail(cfg) {
  const words = (cfg && cfg.words) || ["forbidden"];
  if (!Array.isArray(words) || !words.every((w) => typeof w === "string" && w)) {
    throw new Error("config field words: want a list of non-empty strings");
  }
  const low = words.map((w) => w.toLowerCase());
  return {
    capabilities: { reads_body: true },
    onRequest: (ctx, ex) => (hits(low, ex.requestBody) ? abkit.reject(403, "request names a blocked word") : abkit.proceed()),
    onResponse: (ctx, ex) => {
      ex.setExtension("guardrail", { response_hits: hits(low, ex.responseBody) });
      return abkit.proceed();
    },
    onResponseFrame: (ctx, ex, frame, last) => {
      ex.state.set("hits", (ex.state.get("hits") || 0) + hits(low, frame));
      if (last) ex.setExtension("guardrail", { response_hits: ex.state.get("hits") });
      return abkit.proceed();
    },
  };
}

abkit.serve({
  name: "ts-guardrail",
  description: "Rejects requests naming blocked words; counts them in responses",
  version: "1.0.0",
  pipeline: {
    new: guardrail,
    config: [{ name: "words", type: "array", description: "blocked words, case-insensitive", default: ["forbidden"] }],
  },
});
