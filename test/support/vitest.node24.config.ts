import { defineConfig } from "vitest/config";
import base from "../../vitest.config";

// `npm run test:node24` (part of `npm test`): the same tests, on Node 24 LTS, for the part of the
// suite where the Node version shows — the production server and the three packages as their
// users run them. Everything else runs on Node 20.9+ in `vitest run` (which runs these too).
// Servers and gateways the tests start run on the Node running the tests (process.execPath).
//
// Chosen to stay under about two minutes on the 2-core machines: the server through its HTTP API,
// its SSE streams and the OpenAPI document; the SDK's client against that server and its packed
// tarball in a plain Node project; the review card's package and tarball; the gateway's gate over
// stdio, its transparency over streamable HTTP, and its tarball.

const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  throw new Error(
    `test/support/vitest.node24.config.ts runs on Node 24 (this is ${process.version}): npm run test:node24`,
  );
}

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      "test/ops/node-runtime.test.ts",
      "test/api/health.test.ts",
      "test/api/decisions.test.ts",
      "test/streams/reviewer-stream.test.ts",
      "test/sdk/client.test.ts",
      "test/sdk/gate.test.ts",
      "test/sdk/wait.test.ts",
      "test/sdk/retries.test.ts",
      "test/card-package/review-card-package.test.tsx",
      "test/card-package/review-card-tarball.test.ts",
      "test/mcp-gateway/gateway.test.ts",
      "test/mcp-gateway/transparency-http.test.ts",
      "test/mcp-gateway/package.test.ts",
    ],
  },
});
