import { afterEach, describe, expect, it } from "vitest";
import { plainHttpCredentialProblem, upstreamUrlProblem } from "@/lib/mcp-gateways/upstream-target";

// Review finding L6: a hosted gateway's credential (its headers) never crosses the network in
// plain text, and no credential sits in its URL, which admins and the audit log are shown. The
// API's answers (400 on headers or url, nothing written) are in admin-api.test.ts.

afterEach(() => {
  delete process.env.MCP_GATEWAY_PLAIN_HTTP_HOSTS;
});

describe("headers over plain http", () => {
  it.each([
    "http://mcp.example.com/mcp",
    "http://10.0.0.5:8080/mcp",
    "http://127.0.0.1.nip.io/mcp",
  ])("are refused to %s", (url) => {
    expect(plainHttpCredentialProblem(url, 1)).toMatch(/only over https/);
  });

  it.each([
    ["https://mcp.example.com/mcp", 1],
    ["http://127.0.0.1:8080/mcp", 1],
    ["http://127.3.4.5/mcp", 1],
    ["http://[::1]:8080/mcp", 1],
    ["http://localhost:8080/mcp", 1],
    ["http://mcp.localhost/mcp", 1],
    ["http://mcp.example.com/mcp", 0], // no credential to expose
  ] as const)("may go to %s (%i headers)", (url, count) => {
    expect(plainHttpCredentialProblem(url, count)).toBeNull();
  });

  it("go where the operator allows it in MCP_GATEWAY_PLAIN_HTTP_HOSTS (a name, a range, a port)", () => {
    process.env.MCP_GATEWAY_PLAIN_HTTP_HOSTS = "mcp.internal, 10.1.0.0/16, tools.lan:8080";
    expect(plainHttpCredentialProblem("http://mcp.internal/mcp", 1)).toBeNull();
    expect(plainHttpCredentialProblem("http://10.1.2.3:9000/mcp", 1)).toBeNull();
    expect(plainHttpCredentialProblem("http://tools.lan:8080/mcp", 1)).toBeNull();
    expect(plainHttpCredentialProblem("http://tools.lan:8081/mcp", 1)).not.toBeNull();
    expect(plainHttpCredentialProblem("http://10.2.0.1/mcp", 1)).not.toBeNull();
  });
});

describe("credentials in the URL", () => {
  it.each([
    ["https://user:pw@mcp.example.com/mcp", "user:password@"],
    ["https://mcp.example.com/mcp?token=abc", "'token'"],
    ["https://mcp.example.com/mcp?api_key=abc", "'api_key'"],
    ["https://mcp.example.com/mcp?x=1&access_token=abc", "'access_token'"],
    ["https://mcp.example.com/sse?sig=abc&se=2026", "'sig'"],
    ["https://mcp.example.com/mcp?Authorization=Bearer%20x", "'Authorization'"],
  ])("are refused: %s", (url, what) => {
    const problem = upstreamUrlProblem(url);
    expect(problem).toContain(what);
    expect(problem).toContain("header");
  });

  it.each([
    "https://mcp.example.com/mcp?sessionToken=abc",
    "https://mcp.example.com/mcp?X-Amz-Signature=abc",
    "https://mcp.example.com/mcp?client_secret=abc",
    "https://mcp.example.com/mcp?key=abc",
    "https://mcp.example.com/mcp?x-api-key=abc",
    "https://mcp.example.com/mcp?accessKey=abc",
    "https://mcp.example.com/mcp?AWSAccessKeyId=abc",
    "https://mcp.example.com/mcp?privateKey=abc",
    "https://mcp.example.com/mcp?subscriptionkey=abc",
    "https://mcp.example.com/mcp?api%20key=abc",
    "https://mcp.example.com/mcp?key[]=abc",
  ])("are refused: %s", (url) => {
    expect(upstreamUrlProblem(url)).toMatch(/credential in its query/);
  });

  it("a loopback name lets headers travel over plain http only when it resolves to loopback", () => {
    const url = "http://tools.localhost:8080/mcp";
    expect(plainHttpCredentialProblem(url, 1)).toBeNull(); // at save: by name
    expect(plainHttpCredentialProblem(url, 1, [{ address: "127.0.0.1" }])).toBeNull();
    expect(plainHttpCredentialProblem(url, 1, [{ address: "93.184.216.34" }])).toMatch(
      /only over https/,
    );
    expect(
      plainHttpCredentialProblem(url, 1, [{ address: "127.0.0.1" }, { address: "93.184.216.34" }]),
    ).toMatch(/only over https/);
  });

  it("other query parameters are fine", () => {
    expect(
      upstreamUrlProblem(
        "https://mcp.example.com/mcp?project=docs&region=eu&author=ada&oauth_version=2&monkey=1",
      ),
    ).toBeNull();
  });
});
