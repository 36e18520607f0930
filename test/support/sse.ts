// A server-sent-events client for tests, reading the raw stream with fetch (so headers such as
// Last-Event-ID are under the test's control).

export type SseMessage = { id: string | null; event: string; data: any };

export type SseClient = {
  messages: SseMessage[];
  /** resolves with the first message (already received or future) that matches */
  waitFor: (test: (m: SseMessage) => boolean, timeoutMs?: number) => Promise<SseMessage>;
  /** the raw text received, comments included */
  raw: () => string;
  close: () => void;
  /** settles when the server ends the stream (or it is closed) */
  ended: Promise<void>;
  status: number;
};

export async function openSse(
  url: string,
  options: { token?: string; lastEventId?: string | number; headers?: Record<string, string> } = {},
): Promise<SseClient> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.lastEventId !== undefined) headers["last-event-id"] = String(options.lastEventId);
  const response = await fetch(url, { headers, signal: controller.signal });
  const messages: SseMessage[] = [];
  const waiters: { test: (m: SseMessage) => boolean; resolve: (m: SseMessage) => void }[] = [];
  let text = "";
  let pending = "";

  const dispatch = (block: string) => {
    let id: string | null = null;
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const [field, ...rest] = line.split(":");
      const value = rest.join(":").replace(/^ /, "");
      if (field === "id") id = value;
      else if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (data.length === 0 && id === null) return;
    const raw = data.join("\n");
    let parsed: unknown = raw;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // keep the text
    }
    const message = { id, event, data: parsed };
    messages.push(message);
    for (const waiter of [...waiters]) {
      if (waiter.test(message)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  };

  let ended: Promise<void> = Promise.resolve();
  if (response.ok && response.body) {
    ended = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          const piece = decoder.decode(chunk, { stream: true });
          text += piece;
          pending += piece;
          let end: number;
          while ((end = pending.indexOf("\n\n")) >= 0) {
            dispatch(pending.slice(0, end));
            pending = pending.slice(end + 2);
          }
        }
      } catch {
        // aborted
      }
    })();
  }

  return {
    messages,
    status: response.status,
    raw: () => text,
    close: () => controller.abort(),
    ended,
    waitFor: (test, timeoutMs = 5000) => {
      const found = messages.find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { test, resolve: (m: SseMessage) => (clearTimeout(timer), resolve(m)) };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(
            new Error(
              `No matching SSE message in ${timeoutMs} ms; got: ${messages.map((m) => m.event).join(", ")}`,
            ),
          );
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
  };
}
