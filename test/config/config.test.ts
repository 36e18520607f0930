import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { envExample, withCurrentTable } from "@/lib/config/config-docs";
import { configProblems, configReport } from "@/lib/http/check-config";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { listenAddress } from "@/lib/config/listen-address";
import { ConfigError, SETTINGS, setting } from "@/lib/config/settings";

// The settings module (lib/config/settings.ts) is the one place settings are read: these tests
// keep the docs generated from it current, keep code from reading process.env around it, and
// check that bad values are named clearly.

const root = process.cwd();
/** Each variable a test changed, with its value before (undefined: unset). */
const before = new Map<string, string | undefined>();

function setEnv(values: Record<string, string | undefined>) {
  for (const [name, value] of Object.entries(values)) {
    if (!before.has(name)) before.set(name, process.env[name]);
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

afterEach(() => {
  for (const [name, value] of before) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  before.clear();
});

describe("the generated docs", () => {
  it(".env.example lists exactly the schema's settings, as `npm run config:docs` writes it", () => {
    const committed = readFileSync(join(root, ".env.example"), "utf8");
    expect(committed, "run npm run config:docs").toBe(envExample());
    const listed = [...committed.matchAll(/^#([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    expect(listed).toEqual(Object.keys(SETTINGS));
  });

  it("lib/config/README.md's settings table is the schema's, as `npm run config:docs` writes it", async () => {
    const readme = readFileSync(join(root, "lib", "config", "README.md"), "utf8");
    expect(readme, "run npm run config:docs").toBe(await withCurrentTable(readme));
    const table = readme.slice(
      readme.indexOf("<!-- settings:begin"),
      readme.indexOf("<!-- settings:end"),
    );
    const listed = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)`/gm)].map((m) => m[1]);
    expect(listed).toEqual(Object.keys(SETTINGS));
  });
});

/** Source files of the app (not the SDK or Python packages, which run elsewhere). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    // the packages that run in the agent's process (sdk, python, mcp-gateway) or the host's
    // page (review-card) take their settings from their callers, not from the server's
    if (
      [
        "node_modules",
        "dist",
        ".next",
        "sdk",
        "python",
        "mcp-gateway",
        "review-card",
        "config",
      ].includes(name)
    )
      return [];
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

it("no code reads a setting from process.env around lib/config/settings.ts", () => {
  // Node's, Next's and the terminal's own variables are not Countersign settings.
  const allowed = /process\.env( as [^)]*\))?(\.|\[")(NODE_ENV|NEXT_RUNTIME|NO_COLOR)\b/;
  const stray: string[] = [];
  for (const file of [
    ...["app", "components", "db", "lib"].flatMap((dir) => sources(join(root, dir))),
    join(root, "proxy.ts"),
    join(root, "instrumentation.ts"),
  ]) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, index) => {
        const reads = line.replace(/process\.env\.PORT = /, "").match(/process\.env\b[^\n]*/g);
        if (reads && !reads.every((read) => allowed.test(read)))
          stray.push(`${file.slice(root.length + 1)}:${index + 1}: ${line.trim()}`);
      });
  }
  expect(stray, "read these through setting() and add them to lib/config/settings.ts").toEqual([]);
});

describe("checking the configuration", () => {
  it("names every unusable variable, once, with what it must be, and never echoes a secret", () => {
    setEnv({
      PORT: "eighty",
      LOG_LEVEL: "loud",
      SMTP_URL: "not a url with hunter2",
      TRUSTED_PROXIES: "10.0.0.0/8, proxy.internal",
      COUNTERSIGN_SECRET_KEY: "too-short-hunter2",
      HEADERS_TIMEOUT_MS: "20000",
      REQUEST_TIMEOUT_MS: "5000",
      DATABASE_URL: "postgres://db/countersign",
    });
    const problems = configProblems();
    expect(problems).toHaveLength(7);
    expect(problems.find((p) => p.startsWith("PORT:"))).toContain("whole number");
    expect(problems.find((p) => p.startsWith("LOG_LEVEL:"))).toMatch(/info/);
    expect(problems.find((p) => p.startsWith("SMTP_URL:"))).toContain("must be a URL");
    expect(problems.find((p) => p.startsWith("TRUSTED_PROXIES:"))).toContain("proxy.internal");
    expect(problems.find((p) => p.startsWith("COUNTERSIGN_SECRET_KEY"))).toContain(
      "32 random bytes",
    );
    expect(problems.find((p) => p.startsWith("REQUEST_TIMEOUT_MS:"))).toContain(
      "HEADERS_TIMEOUT_MS",
    );
    expect(problems.find((p) => p.startsWith("DATABASE_URL:"))).toContain("file:");
    const report = configReport()!;
    expect(report.split("\n")[0]).toBe("Countersign cannot start: 7 settings are not usable.");
    expect(report).not.toContain("hunter2");
  });

  it("reads defaults, treats an empty value as unset, and follows changes (as tests make them)", () => {
    setEnv({ STREAMS_PER_CALLER: undefined, MAIL_FROM: "" });
    expect(setting("STREAMS_PER_CALLER")).toBe(20);
    expect(setting("MAIL_FROM")).toBe("Countersign <countersign@localhost>");
    setEnv({ STREAMS_PER_CALLER: " 7 " });
    expect(setting("STREAMS_PER_CALLER")).toBe(7);
    setEnv({ STREAMS_PER_CALLER: "0" });
    expect(() => setting("STREAMS_PER_CALLER")).toThrow(ConfigError);
    expect(() => setting("STREAMS_PER_CALLER")).toThrow("STREAMS_PER_CALLER: must be at least 1");
    expect(configReport()).toContain("STREAMS_PER_CALLER");
  });
});

describe("the listen address", () => {
  it("is loopback by default, an IP address or localhost from HOSTNAME, and never a machine name", () => {
    const cases: [string | undefined, string, boolean][] = [
      [undefined, "127.0.0.1", false],
      ["0.0.0.0", "0.0.0.0", false],
      ["::", "::", false],
      ["[::1]", "::1", false],
      ["10.1.2.3", "10.1.2.3", false],
      ["localhost", "localhost", false],
      ["3f2a9b1c7d0e", "127.0.0.1", true], // Docker's HOSTNAME: the container id
      ["build-box.example.com", "127.0.0.1", true],
    ];
    for (const [hostname, address, warned] of cases) {
      setEnv({ HOSTNAME: hostname });
      const listen = listenAddress();
      expect(listen.address, String(hostname)).toBe(address);
      expect(Boolean(listen.warning), String(hostname)).toBe(warned);
      if (warned) expect(listen.warning).toContain("HOSTNAME=0.0.0.0");
    }
  });
});

describe("the public address (links in invites, reviewUrl, the demo)", () => {
  it("is PUBLIC_URL when set, else the address the server listens on, never another origin", () => {
    const cases: [string | undefined, string | undefined, string][] = [
      // Issue 26: the server and its sessions are on 127.0.0.1; links said `localhost`.
      [undefined, undefined, "http://127.0.0.1:4321"],
      ["localhost", undefined, "http://localhost:4321"],
      ["::1", undefined, "http://[::1]:4321"],
      ["0.0.0.0", undefined, "http://127.0.0.1:4321"],
      ["0.0.0.0", "https://cs.example.com/", "https://cs.example.com"],
    ];
    for (const [hostname, publicUrl, base] of cases) {
      setEnv({ HOSTNAME: hostname, PUBLIC_URL: publicUrl, PORT: "4321" });
      expect(publicBaseUrl(), `${hostname} ${publicUrl}`).toBe(base);
    }
  });
});

it("the project and its packages say their license, and the LICENSE file is MIT", () => {
  expect(readFileSync(join(root, "LICENSE"), "utf8")).toMatch(
    /^MIT License\n\nCopyright \(c\) \d{4} the Countersign authors/,
  );
  for (const manifest of [
    "package.json",
    "lib/sdk/package.json",
    "components/review-card/package.json",
  ])
    expect(JSON.parse(readFileSync(join(root, manifest), "utf8")).license, manifest).toBe("MIT");
  expect(readFileSync(join(root, "lib/python/pyproject.toml"), "utf8")).toContain(
    'license = { text = "MIT" }',
  );
});
