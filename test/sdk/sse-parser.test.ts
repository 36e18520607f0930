import { describe, expect, it } from "vitest";
import { SseParser, type SseMessage } from "@/lib/sdk/index";
import { readSse } from "@/lib/sdk/sse";

// The SDK parses server-sent events itself (EventSource cannot send an Authorization header):
// whatever way the bytes are cut into chunks, the same messages come out.

const wire =
  "retry: 2000\n: connected\n\n" +
  'id: 41\nevent: call.voted\ndata: {"seq":41}\n\n' +
  ": keep-alive\n\n" +
  "id: 42\r\nevent: batch.decided\r\ndata: line one\r\ndata: line two\r\n\r\n" +
  "id: 43\revent: resync\rdata\r\r" +
  "data: no id\n\n";

const expected: SseMessage[] = [
  { id: "41", event: "call.voted", data: '{"seq":41}' },
  { id: "42", event: "batch.decided", data: "line one\nline two" },
  { id: "43", event: "resync", data: "" },
  { id: null, event: "message", data: "no id" },
];

describe("SseParser", () => {
  it("reads ids, events, multi-line data and comments with LF, CRLF and CR line ends", () => {
    const parser = new SseParser();
    expect(parser.push(wire)).toEqual(expected);
    expect(parser.retryMs).toBe(2000);
  });

  it("gives the same messages however the text is split, a CRLF cut in half included", () => {
    for (let size = 1; size <= 7; size++) {
      const parser = new SseParser();
      const messages: SseMessage[] = [];
      for (let i = 0; i < wire.length; i += size)
        messages.push(...parser.push(wire.slice(i, i + size)));
      expect(messages).toEqual(expected);
    }
  });

  it("decodes UTF-8 split inside a character, chunk by chunk from a byte stream", async () => {
    const bytes = new TextEncoder().encode(
      'id: 7\nevent: call.decided\ndata: {"reason":"trop chère ✓"}\n\n',
    );
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    const messages: SseMessage[] = [];
    for await (const chunk of readSse(body)) messages.push(...chunk);
    expect(messages).toEqual([
      { id: "7", event: "call.decided", data: '{"reason":"trop chère ✓"}' },
    ]);
  });
});
