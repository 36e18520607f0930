import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": fileURLToPath(new URL(".", import.meta.url)) } },
  test: {
    include: ["test/**/*.test.{ts,tsx}"],
    exclude: ["test/bench/**", "node_modules/**"],
    // Files start their own servers and databases; two at a time suits the 2-core machines.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
