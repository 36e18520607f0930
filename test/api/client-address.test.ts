import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "@/test/support/database";
import { makeTeam } from "@/test/support/factories";
import { waitUntil } from "@/test/support/polling";
import { startServer, type TestServer } from "@/test/support/server";

// The rate limits (bearer-credential guessing, sign-in) count per client address, and the address
// is the socket's unless TRUSTED_PROXIES names the socket as a proxy (issue 14, finding 7):
// rotating X-Forwarded-For does not escape a limit, writing a victim's address into it does not
// block the victim, and several instances over one database share the counts. Clients on other
// addresses are real: the loopback network is 127.0.0.0/8, so a client socket bound to 127.0.0.2
// reaches the server on 127.0.0.1 from another address.

const LIMIT = 3;
const env = {
  BEARER_FAILURES_PER_WINDOW: String(LIMIT),
  BEARER_FAILURE_WINDOW_SECS: "60",
  SIGN_IN_ATTEMPTS_PER_MINUTE: String(LIMIT),
};

let direct: TestServer; // TRUSTED_PROXIES unset: every client is its socket
let proxiedOne: TestServer; // two instances behind a proxy on 127.0.0.1, over one database
let proxiedTwo: TestServer;
let directTeam: Awaited<ReturnType<typeof makeTeam>>;
let team: Awaited<ReturnType<typeof makeTeam>>;

beforeAll(async () => {
  const own = await freshDatabase("client-address-direct");
  directTeam = await makeTeam();
  direct = await startServer({ databaseUrl: own, env });
  const shared = await freshDatabase("client-address-proxied");
  team = await makeTeam();
  const proxied = { ...env, TRUSTED_PROXIES: "127.0.0.1, ::1" };
  [proxiedOne, proxiedTwo] = await Promise.all([
    startServer({ databaseUrl: shared, env: proxied }),
    startServer({ databaseUrl: shared, env: proxied }),
  ]);
}, 90_000);
afterAll(() => Promise.all([direct?.stop(), proxiedOne?.stop(), proxiedTwo?.stop()]));

type From = { socket?: string; forwardedFor?: string };

/** One HTTP request from the loopback address `from.socket` (default 127.0.0.1). */
function send(
  server: TestServer,
  path: string,
  from: From,
  options: { authorization?: string; body?: unknown } = {},
): Promise<number> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${server.baseUrl}${path}`,
      {
        method: body ? "POST" : "GET",
        localAddress: from.socket ?? "127.0.0.1",
        agent: false,
        headers: {
          ...(options.authorization && { authorization: `Bearer ${options.authorization}` }),
          ...(from.forwardedFor && { "x-forwarded-for": from.forwardedFor }),
          ...(body && { "content-type": "application/json", origin: server.baseUrl }),
        },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode!));
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

const queueAs = (server: TestServer, token: string, from: From) =>
  send(server, "/api/v1/queue", from, { authorization: token });

const signIn = (server: TestServer, password: string, from: From, email = team.reviewer.email) =>
  send(server, "/api/auth/sign-in/email", from, { body: { email, password } });

const PASSWORD = "correct horse battery";

describe("without TRUSTED_PROXIES, X-Forwarded-For is ignored", () => {
  it("rotating it does not escape the bearer limit", async () => {
    const guesser = "127.0.0.2";
    for (let i = 0; i < LIMIT; i++) {
      const from = { socket: guesser, forwardedFor: `198.51.100.${i + 1}` };
      expect(await queueAs(direct, `cs_rev_guess${i}`, from)).toBe(401);
    }
    const fresh = { socket: guesser, forwardedFor: "198.51.100.99" };
    expect(await queueAs(direct, directTeam.reviewer.token, fresh)).toBe(429);
  });

  it("writing a victim's address into it does not block the victim", async () => {
    const victim = "127.0.0.4";
    for (let i = 0; i < LIMIT + 1; i++) {
      const from = { socket: "127.0.0.3", forwardedFor: victim };
      await queueAs(direct, `cs_agent_guess${i}`, from);
    }
    expect(await queueAs(direct, directTeam.reviewer.token, { socket: "127.0.0.3" })).toBe(429);
    expect(await queueAs(direct, directTeam.reviewer.token, { socket: victim })).toBe(200);
  });

  it("rotating it does not escape the sign-in limit", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) {
      const from = { socket: "127.0.0.5", forwardedFor: `198.51.100.${i + 1}` };
      statuses.push(await signIn(direct, `wrong guess ${i}`, from, directTeam.reviewer.email));
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(401), 429]);
  });

  it("writing a victim's address into it does not lock the victim out of sign-in", async () => {
    const victim = "127.0.0.7";
    for (let i = 0; i < LIMIT + 1; i++) {
      await signIn(
        direct,
        `wrong guess ${i}`,
        { socket: "127.0.0.6", forwardedFor: victim },
        directTeam.reviewer.email,
      );
    }
    expect(await signIn(direct, PASSWORD, { socket: "127.0.0.6" }, directTeam.reviewer.email)).toBe(
      429,
    );
    expect(await signIn(direct, PASSWORD, { socket: victim }, directTeam.reviewer.email)).toBe(200);
  });
});

describe("with TRUSTED_PROXIES, a proxy's X-Forwarded-For is believed, and instances share counts", () => {
  it("counts per forwarded client behind a trusted proxy, and ignores the header from anyone else", async () => {
    for (let i = 0; i < LIMIT; i++) {
      const from = { forwardedFor: `10.0.0.1, 203.0.113.1` };
      expect(await queueAs(proxiedOne, `cs_rev_guess${i}`, from)).toBe(401);
    }
    // The entry the proxy appended names the client; the client's own first entry does not.
    expect(await queueAs(proxiedOne, team.reviewer.token, { forwardedFor: "203.0.113.1" })).toBe(
      429,
    );
    expect(
      await queueAs(proxiedOne, team.reviewer.token, { forwardedFor: "203.0.113.1, 203.0.113.2" }),
    ).toBe(200);
    // A socket that is not a trusted proxy is its own address, whatever it forwards.
    const untrusted = { socket: "127.0.0.8", forwardedFor: "203.0.113.3" };
    for (let i = 0; i < LIMIT; i++) await queueAs(proxiedOne, `cs_rev_guess${i}`, untrusted);
    expect(await queueAs(proxiedOne, team.reviewer.token, { forwardedFor: "203.0.113.3" })).toBe(
      200,
    );
    expect(await queueAs(proxiedOne, team.reviewer.token, { socket: "127.0.0.8" })).toBe(429);
  });

  it("two instances over one database share the bearer count", async () => {
    const from = { forwardedFor: "203.0.113.9" };
    for (let i = 0; i < LIMIT - 1; i++)
      expect(await queueAs(proxiedOne, `cs_agent_guess${i}`, from)).toBe(401);
    expect(await queueAs(proxiedTwo, "cs_agent_guess_last", from)).toBe(401);
    // The instance that counted the last failure blocks at once, the other within a second.
    expect(await queueAs(proxiedTwo, team.agent.key, from)).toBe(429);
    await waitUntil(async () => (await queueAs(proxiedOne, team.agent.key, from)) === 429, {
      timeoutMs: 3000,
      what: "the other instance to block",
    });
  });

  it("two instances over one database share the sign-in count", async () => {
    const from = { forwardedFor: "203.0.113.20" };
    expect(await signIn(proxiedOne, "wrong 1", from)).toBe(401);
    expect(await signIn(proxiedTwo, "wrong 2", from)).toBe(401);
    expect(await signIn(proxiedOne, "wrong 3", from)).toBe(401);
    expect(await signIn(proxiedTwo, PASSWORD, from)).toBe(429);
    // Another client behind the same proxy is not slowed.
    expect(await signIn(proxiedTwo, PASSWORD, { forwardedFor: "203.0.113.21" })).toBe(200);
  });
});
