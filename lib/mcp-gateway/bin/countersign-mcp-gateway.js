#!/usr/bin/env node
// The bin is a stub over the build so `npm install` can link it before anything is compiled.
import { main } from "../dist/index.js";

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === "number") process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`countersign-mcp-gateway: ${error?.message ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
