import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseArgs, upstreamFingerprint, type GatewayOptions } from "@/lib/mcp-gateway/args";
import { GATEWAY_BIN } from "./gateway-process";

// The gateway's command line (issue 25 fixes it): flags or COUNTERSIGN_URL / COUNTERSIGN_AGENT_KEY,
// the upstream as a command after `--` or as --upstream-url with headers, and a clear error for
// anything else. The last tests run the bin `npm install` linked, as an MCP client's config does.

const execFileAsync = promisify(execFile);
const base = ["--url", "https://cs.example.com/", "--key", "cs_agent_abc"];

function options(argv: string[], env: Record<string, string> = {}): GatewayOptions {
  const parsed = parseArgs(argv, env);
  if (parsed.kind !== "run") throw new Error(JSON.stringify(parsed));
  return parsed.options;
}

function problem(argv: string[], env: Record<string, string> = {}): string {
  const parsed = parseArgs(argv, env);
  if (parsed.kind !== "error") throw new Error(`expected an error, got ${JSON.stringify(parsed)}`);
  return parsed.message;
}

describe("parseArgs", () => {
  it("takes the upstream command after --, flags before it", () => {
    const parsed = options([
      ...base,
      "--name",
      "filesystem",
      "--",
      "npx",
      "-y",
      "srv",
      "--url",
      "/tmp",
    ]);
    expect(parsed).toMatchObject({
      countersignUrl: "https://cs.example.com",
      agentKey: "cs_agent_abc",
      name: "filesystem",
      upstream: { kind: "stdio", command: "npx", args: ["-y", "srv", "--url", "/tmp"] },
      queue: null,
      timeoutSecs: null,
      upstreamTimeoutMs: 600_000,
    });
  });

  it("reads COUNTERSIGN_URL and COUNTERSIGN_AGENT_KEY, flags win over them, --flag=value works", () => {
    const env = { COUNTERSIGN_URL: "http://127.0.0.1:3000", COUNTERSIGN_AGENT_KEY: "cs_agent_env" };
    expect(options(["--", "srv"], env)).toMatchObject({
      countersignUrl: "http://127.0.0.1:3000",
      agentKey: "cs_agent_env",
    });
    expect(options(["--key=cs_agent_flag", "--timeout=90", "--", "srv"], env)).toMatchObject({
      agentKey: "cs_agent_flag",
      timeoutSecs: 90,
    });
  });

  it("takes an HTTP upstream with headers, and SSE when the URL ends in /sse", () => {
    const http = options([
      ...base,
      "--upstream-url",
      "https://mcp.example.com/mcp",
      "--upstream-header",
      "Authorization: Bearer up-token",
      "--upstream-header",
      "X-Team:  blue ",
    ]);
    expect(http.upstream).toMatchObject({
      kind: "http",
      sse: false,
      headers: { Authorization: "Bearer up-token", "X-Team": "blue" },
    });
    expect((http.upstream as { url: URL }).url.href).toBe("https://mcp.example.com/mcp");
    expect(options([...base, "--upstream-url", "http://127.0.0.1:9/sse"]).upstream).toMatchObject({
      kind: "http",
      sse: true,
    });
  });

  it.each([
    [["--", "srv"], /Countersign address is missing: --url URL or COUNTERSIGN_URL/],
    [
      ["--url", "https://x", "--", "srv"],
      /agent key is missing: --key KEY or COUNTERSIGN_AGENT_KEY/,
    ],
    [[...base], /no upstream MCP server: give its command after '--'/],
    [[...base, "--name"], /--name needs a value/],
    [[...base, "--name", "--", "srv"], /--name needs a value/],
    [[...base, "--bogus", "--", "srv"], /unknown option '--bogus'/],
    [[...base, "npx", "srv"], /unexpected 'npx': put the upstream server's command after '--'/],
    [["--url", "ftp://x", "--key", "k", "--", "srv"], /--url must be http\(s\)/],
    [["--url", "not a url", "--key", "k", "--", "srv"], /--url is not a URL/],
    [
      [...base, "--upstream-url", "http://x/mcp", "--", "srv"],
      /either as a command after '--' or as --upstream-url, not both/,
    ],
    [
      [...base, "--upstream-header", "Bad", "--", "srv"],
      /--upstream-header must look like 'Name: value'/,
    ],
    [
      [...base, "--upstream-header", "A: b", "--", "srv"],
      /--upstream-header goes with --upstream-url/,
    ],
    [[...base, "--timeout", "0", "--", "srv"], /--timeout is whole seconds/],
    [[...base, "--upstream-timeout", "soon", "--", "srv"], /--upstream-timeout is seconds above 0/],
  ])("refuses %j", (argv, message) => {
    expect(problem(argv)).toMatch(message);
  });

  it("takes --spool DIR for the outcome spool (default: none given, the OS's state directory)", () => {
    expect(options([...base, "--", "srv"]).spool).toBeNull();
    expect(options([...base, "--spool", "/var/spool/gw", "--", "srv"]).spool).toBe("/var/spool/gw");
    expect(problem([...base, "--spool", "--", "srv"])).toMatch(/--spool needs a value/);
  });

  it("takes --listen HOST:PORT on loopback, and elsewhere only with --listen-any", () => {
    expect(options([...base, "--listen", "127.0.0.1:8931", "--", "srv"]).listen).toEqual({
      host: "127.0.0.1",
      port: 8931,
    });
    expect(options([...base, "--listen", "8931", "--", "srv"]).listen).toEqual({
      host: "127.0.0.1",
      port: 8931,
    });
    expect(options([...base, "--listen", "[::1]:0", "--", "srv"]).listen).toEqual({
      host: "::1",
      port: 0,
    });
    expect(options([...base, "--", "srv"]).listen).toBeNull();
    expect(problem([...base, "--listen", "0.0.0.0:8931", "--", "srv"])).toMatch(
      /--listen 0.0.0.0 is not a loopback address: .* Add --listen-any/,
    );
    expect(
      options([...base, "--listen", "0.0.0.0:8931", "--listen-any", "--", "srv"]).listen,
    ).toEqual({ host: "0.0.0.0", port: 8931 });
    expect(problem([...base, "--listen", "host:99999", "--", "srv"])).toMatch(
      /--listen is HOST:PORT/,
    );
    expect(problem([...base, "--listen-any", "--", "srv"])).toMatch(
      /--listen-any goes with --listen/,
    );
  });

  it("answers --help and --version wherever they stand before --", () => {
    expect(parseArgs(["--help"], {}).kind).toBe("help");
    expect(parseArgs([...base, "-h", "--", "srv"], {}).kind).toBe("help");
    expect(parseArgs(["--version"], {}).kind).toBe("version");
    // after -- it is the upstream's own flag
    expect(options([...base, "--", "srv", "--help"]).upstream).toMatchObject({ args: ["--help"] });
  });
});

describe("the bin", () => {
  it("prints --help with the interface and a client config example", async () => {
    const { stdout } = await execFileAsync(process.execPath, [GATEWAY_BIN, "--help"]);
    expect(stdout).toContain(
      "countersign-mcp-gateway --url URL --key KEY [options] -- UPSTREAM_COMMAND [ARGS…]",
    );
    expect(stdout).toContain("--upstream-url URL");
    expect(stdout).toContain("COUNTERSIGN_AGENT_KEY");
    expect(stdout).toMatch(/Claude Code .*Claude Desktop .*Cursor/s);
    expect(stdout).toContain('"mcpServers"');
    expect(stdout).toContain("--spool DIR");
  });

  it("exits 2 with a clear message on a bad flag, writing nothing to stdout (the MCP channel)", async () => {
    const failed = await execFileAsync(process.execPath, [GATEWAY_BIN, "--url"], {
      env: { ...process.env, COUNTERSIGN_URL: "", COUNTERSIGN_AGENT_KEY: "" },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect("code" in failed && failed.code).toBe(2);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toMatch(
      /countersign-mcp-gateway: --url needs a value\nRun countersign-mcp-gateway --help/,
    );
  });
});

describe("upstreamFingerprint", () => {
  it("is the same for the same command or URL, and differs for another", () => {
    const dev = upstreamFingerprint({
      kind: "stdio",
      command: "uvx",
      args: ["mcp-sqlite", "dev.db"],
    });
    expect(dev).toMatch(/^[0-9a-f]{16}$/);
    expect(
      upstreamFingerprint({ kind: "stdio", command: "uvx", args: ["mcp-sqlite", "dev.db"] }),
    ).toBe(dev);
    expect(
      upstreamFingerprint({ kind: "stdio", command: "uvx", args: ["mcp-sqlite", "prod.db"] }),
    ).not.toBe(dev);
    const url = (href: string) =>
      upstreamFingerprint({ kind: "http", url: new URL(href), headers: {}, sse: false });
    expect(url("https://a.example/mcp")).toBe(url("https://a.example/mcp"));
    expect(url("https://a.example/mcp")).not.toBe(url("https://b.example/mcp"));
  });
});
