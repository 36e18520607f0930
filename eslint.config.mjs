import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

const config = [
  ...nextVitals,
  ...nextTs,
  {
    // `const { omitted, ...rest } = row` is how a field is dropped from a copy.
    rules: {
      "@typescript-eslint/no-unused-vars": ["warn", { ignoreRestSiblings: true }],
    },
  },
  {
    // Tests read loosely typed JSON answers; `any` there keeps assertions readable.
    files: ["test/**/*.ts", "e2e/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    ignores: [
      ".next/**",
      "node_modules/**",
      "data/**",
      "db/migrations/**",
      "test-results/**",
      "playwright-report/**",
      "dist/**",
      "lib/sdk/dist/**",
      "lib/mcp-gateway/dist/**",
      "components/review-card/dist/**",
      "lib/python/.venv/**",
      "next-env.d.ts",
    ],
  },
];

export default config;
