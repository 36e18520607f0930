// A server-sent-events reader over fetch's body stream (EventSource cannot send an Authorization
// header). Parses as the HTML standard says: LF, CR or CRLF line ends, `:` comments, the
// id/event/data/retry fields, a message dispatched at each blank line.

export type SseMessage = {
  /** the message's `id:`, or null when it had none */
  id: string | null;
  event: string;
  data: string;
};

export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  private id: string | null = null;
  /** the last `retry:` the server sent, in ms */
  retryMs: number | null = null;

  /** Feeds decoded text; returns the messages it completed. */
  push(text: string): SseMessage[] {
    this.buffer += text;
    const messages: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const char = this.buffer[i];
      if (char !== "\n" && char !== "\r") continue;
      // A CR at the very end may be the first half of a CRLF split across chunks: wait for more.
      if (char === "\r" && i === this.buffer.length - 1) break;
      const message = this.line(this.buffer.slice(start, i));
      if (message) messages.push(message);
      if (char === "\r" && this.buffer[i + 1] === "\n") i++;
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return messages;
  }

  private line(line: string): SseMessage | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.id = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retryMs = Number(value);
    return null;
  }

  private dispatch(): SseMessage | null {
    const message =
      this.data.length === 0 && this.id === null
        ? null
        : { id: this.id, event: this.event || "message", data: this.data.join("\n") };
    this.data = [];
    this.event = "";
    this.id = null;
    return message;
  }
}

/**
 * Yields, for every chunk the body delivers, the messages it completed: often none (a keep-alive
 * comment), which still tells the caller the connection is alive. Ends when the body ends.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    // Stops the download when the caller leaves early (a decision found, an abort).
    reader.cancel().catch(() => {});
  }
}
