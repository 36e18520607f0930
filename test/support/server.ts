import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

// Starts the real app (`npm start`'s server, lib/http/server.ts, over the production build) on a
// free loopback port, over the given database. Tests must stop what they start: use
// `afterAll(() => server.stop())`.

export type TestServer = {
  baseUrl: string;
  port: number;
  process: ChildProcess;
  /** everything the server printed, for debugging a failure */
  output: () => string;
  stop: () => Promise<void>;
  /** SIGKILL: the crash that loses whatever only lived in memory */
  kill: () => Promise<void>;
};

/** The production server `npm start` runs, as `npm run build` leaves it (lib/http/server.ts). */
export const SERVER_ENTRY = join("dist", "server.js");

/** Node's arguments that start the production server (add `--hostname` and `--port`). */
export function serverCommand(root = process.cwd()): string[] {
  return [join(root, SERVER_ENTRY)];
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function startServer(options: {
  databaseUrl: string;
  env?: Record<string, string>;
  port?: number;
  /** Node's own options for the server process (e.g. `--cpu-prof`, which NODE_OPTIONS may not carry) */
  nodeArgs?: string[];
}): Promise<TestServer> {
  // A port found free can be taken by another process before the server binds it; then our
  // server exits and the port answers for someone else. Start again on another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, options.port ?? (await freePort()));
    } catch (error) {
      if (!(error instanceof PortTakenError) || options.port !== undefined || attempt === 5)
        throw error;
    }
  }
}

class PortTakenError extends Error {}

async function startOnce(
  options: { databaseUrl: string; env?: Record<string, string>; nodeArgs?: string[] },
  port: number,
): Promise<TestServer> {
  const root = process.cwd();
  if (!existsSync(join(root, ".next", "BUILD_ID")) || !existsSync(join(root, SERVER_ENTRY))) {
    throw new Error("No production build: run `npm run build` first (npm test does).");
  }
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      ...serverCommand(root),
      "--hostname",
      "127.0.0.1",
      "--port",
      String(port),
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        NODE_ENV: "production",
        DATABASE_URL: options.databaseUrl,
        COUNTERSIGN_QUIET: "1",
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        // The tests' webhook receivers listen on loopback, which callbackUrls may not target
        // unless allowed (lib/webhooks/callback-target.ts); test/webhooks/ssrf.test.ts unsets it.
        CALLBACK_ALLOWED_HOSTS: "127.0.0.1",
        // The "Ready in" line this waits for is an info line of the log (a test may ask for more).
        LOG_LEVEL: "info",
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  // Healthy means: this child printed that it is listening, and the port answers.
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (output.includes("EADDRINUSE")) throw new PortTakenError(`port ${port} was taken`);
      throw new Error(`The server exited during start-up:\n${output}`);
    }
    if (output.includes("Ready in")) {
      try {
        const response = await fetch(`${baseUrl}/api/health`);
        if (response.ok) break;
      } catch {
        // not answering yet
      }
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`The server did not become healthy in 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    baseUrl,
    port,
    process: child,
    output: () => output,
    stop: () => end("SIGTERM"),
    kill: () => end("SIGKILL"),
  };
}

/** The one-time setup code a server on an empty database printed at start (lib/auth/setup-code.ts). */
export function setupCodeOf(server: TestServer): string {
  const code = /one-time setup code:\s+(\S+)/.exec(server.output())?.[1];
  if (!code) throw new Error(`The server printed no setup code:\n${server.output()}`);
  return code;
}
