import { describe, expect, it } from "vitest";
import {
  callbackUrlProblem,
  forbiddenAddress,
  parseAllowList,
  resolveCallbackTarget,
  type Lookup,
} from "@/lib/webhooks/callback-target";

// The callbackUrl target check (issue 14, finding 2): which URLs an agent may make the server
// POST to, before the allow-list, after it, and once the name is resolved at send time.

const noAllowList = parseAllowList("");

describe("callbackUrlProblem, with no allow-list", () => {
  const refused: [url: string, why: RegExp][] = [
    ["http://127.0.0.1/hook", /loopback/],
    ["http://127.255.0.9:8080/hook", /loopback/],
    ["http://localhost:3000/hook", /loopback/],
    ["http://LOCALHOST./hook", /loopback/],
    ["http://app.localhost/hook", /loopback/],
    ["http://2130706433/hook", /numeric shorthand/],
    ["http://0x7f.1/hook", /numeric shorthand/],
    ["http://127.1/hook", /numeric shorthand/],
    ["http://017700000001/hook", /numeric shorthand/],
    ["http://0177.0.0.1/hook", /numeric shorthand/],
    ["http://0x08.0x08.0x08.0x08/hook", /numeric shorthand/], // public, but written to hide it
    ["http://0/hook", /numeric shorthand/],
    ["http://127.0.0.%31/hook", /numeric shorthand/],
    ["http://[::1]/hook", /loopback/],
    ["http://[0:0:0:0:0:0:0:1]:4000/hook", /loopback/],
    ["http://[::ffff:127.0.0.1]/hook", /loopback/],
    ["http://[::ffff:a9fe:a9fe]/hook", /link-local/],
    ["http://[::127.0.0.1]/hook", /IPv4-compatible|reserved/],
    ["http://[64:ff9b::a00:1]/hook", /private/],
    ["http://[2002:7f00:1::]/hook", /loopback/],
    ["http://169.254.169.254/latest/meta-data/", /link-local/],
    ["http://[fe80::1]/hook", /link-local/],
    ["http://10.0.0.5/hook", /private/],
    ["http://172.16.3.4/hook", /private/],
    ["http://172.31.255.255/hook", /private/],
    ["http://192.168.1.1/hook", /private/],
    ["http://100.64.0.1/hook", /shared address space|CGNAT/],
    ["http://100.127.255.254/hook", /CGNAT/],
    ["http://[fd00::1]/hook", /unique-local/],
    ["http://[fc00::]/hook", /unique-local/],
    ["http://0.0.0.0/hook", /unspecified|this network/],
    ["http://[::]/hook", /unspecified/],
    ["http://224.0.0.1/hook", /multicast/],
    ["http://[ff02::1]/hook", /multicast/],
    ["http://255.255.255.255/hook", /broadcast|reserved/],
    ["http://user:pass@example.com/hook", /credentials/],
    ["https://token@example.com/hook", /credentials/],
    ["ftp://example.com/hook", /http/],
    ["javascript:alert(1)", /http/],
    ["not a url", /URL/],
  ];
  it.each(refused)("refuses %s", (url, why) => {
    expect(callbackUrlProblem(url, noAllowList)).toMatch(why);
  });

  const accepted = [
    "https://example.com/hook",
    "https://hooks.example.com:8443/countersign?run=1",
    "http://93.184.216.34:8080/hook",
    "http://172.32.0.1/hook", // just past 172.16.0.0/12
    "http://100.128.0.1/hook", // just past 100.64.0.0/10
    "http://11.0.0.1/hook",
    "https://[2606:4700:4700::1111]/hook",
    "http://[::ffff:93.184.216.34]/hook",
  ];
  it.each(accepted)("accepts %s", (url) => {
    expect(callbackUrlProblem(url, noAllowList)).toBeNull();
  });
});

describe("callbackUrlProblem, with an allow-list", () => {
  const allow = parseAllowList("127.0.0.1, localhost:4000 10.1.0.0/16,[::1], hooks.internal");
  const cases: [string, boolean][] = [
    ["http://127.0.0.1:5555/hook", true],
    ["http://localhost:4000/hook", true],
    ["http://localhost:4001/hook", false],
    ["http://10.1.2.3/hook", true],
    ["http://10.2.0.1/hook", false],
    ["http://[::1]:99/hook", true],
    ["http://hooks.internal/hook", true],
    ["http://127.0.0.2/hook", false],
    // shorthand and credentials are refused whatever the list says
    ["http://2130706433/hook", false],
    ["http://user:pass@127.0.0.1/hook", false],
  ];
  it.each(cases)("%s → allowed: %s", (url, allowed) => {
    expect(callbackUrlProblem(url, allow) === null).toBe(allowed);
  });

  it("refuses entries it cannot read, so a typo never widens or silently narrows the list", () => {
    for (const bad of ["10.0.0.0/33", "nonsense/8", "host:port", "[::1", "a b/c"]) {
      expect(() => parseAllowList(bad), bad).toThrow(/CALLBACK_ALLOWED_HOSTS/);
    }
  });
});

describe("forbiddenAddress", () => {
  it("names the range of a forbidden address and passes public ones", () => {
    expect(forbiddenAddress("127.0.0.1")).toMatch(/loopback/);
    expect(forbiddenAddress("::ffff:10.0.0.1")).toMatch(/private/);
    expect(forbiddenAddress("fe80::1%eth0")).toMatch(/link-local/);
    expect(forbiddenAddress("8.8.8.8")).toBeNull();
    expect(forbiddenAddress("2606:4700:4700::1111")).toBeNull();
  });
});

describe("resolveCallbackTarget (send time)", () => {
  const resolvesTo =
    (...addresses: string[]): Lookup =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

  it("answers the checked address to connect to", async () => {
    const target = await resolveCallbackTarget("https://hooks.example.com/x", {
      allow: noAllowList,
      lookup: resolvesTo("93.184.216.34"),
    });
    expect(target).toMatchObject({ ok: true, address: "93.184.216.34", family: 4 });
  });

  it("refuses for good a name that resolves to a forbidden address, even among public ones", async () => {
    const target = await resolveCallbackTarget("https://rebind.example.com/x", {
      allow: noAllowList,
      lookup: resolvesTo("93.184.216.34", "127.0.0.1"),
    });
    expect(target).toMatchObject({ ok: false, permanent: true });
    expect(!target.ok && target.reason).toMatch(/127\.0\.0\.1.*loopback/);
  });

  it("retries a name that does not resolve (DNS may be down)", async () => {
    const target = await resolveCallbackTarget("https://gone.example.com/x", {
      allow: noAllowList,
      lookup: async () => {
        throw Object.assign(new Error("getaddrinfo ENOTFOUND gone.example.com"), {
          code: "ENOTFOUND",
        });
      },
    });
    expect(target).toMatchObject({ ok: false, permanent: false });
  });

  it("lets an allow-listed name through to its loopback address", async () => {
    const target = await resolveCallbackTarget("http://localhost:4000/x", {
      allow: parseAllowList("localhost:4000"),
      lookup: resolvesTo("127.0.0.1"),
    });
    expect(target).toMatchObject({ ok: true, address: "127.0.0.1" });
  });

  it("checks the resolved address against allow-listed ranges", async () => {
    const allow = parseAllowList("10.1.0.0/16");
    const inside = await resolveCallbackTarget("http://svc.internal/x", {
      allow,
      lookup: resolvesTo("10.1.4.4"),
    });
    const outside = await resolveCallbackTarget("http://svc.internal/x", {
      allow,
      lookup: resolvesTo("10.2.4.4"),
    });
    expect(inside.ok).toBe(true);
    expect(outside).toMatchObject({ ok: false, permanent: true });
  });
});
