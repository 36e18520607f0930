import { describe, expect, it } from "vitest";
import { bodyText, jsonText } from "@/lib/json-response";

// A JSON answer (lib/json-response.ts) is a Response like any other to whoever reads it — Next.js
// under `next dev`, the hosted MCP gateways' in-process calls, tests — while the production
// server writes its text without ever building its body's web stream.

const text = JSON.stringify({ ok: true, note: "ünïcode €" });
const answer = () => jsonText(text, 201, { "cache-control": "no-store" });

describe("jsonText", () => {
  it("has the status, headers and text of the Response it stands for", async () => {
    const made = answer();
    expect(made).toBeInstanceOf(Response);
    expect(made.status).toBe(201);
    expect(made.ok).toBe(true);
    expect(made.headers.get("content-type")).toBe("application/json");
    expect(made.headers.get("cache-control")).toBe("no-store");
    expect(bodyText(made)).toBe(text);
    expect(made.bodyUsed).toBe(false);
    expect(await made.json()).toEqual({ ok: true, note: "ünïcode €" });
    expect(made.bodyUsed).toBe(true);
    await expect(made.text()).rejects.toThrow(TypeError);
  });

  it("reads as text, bytes and a stream, and clones", async () => {
    expect(await answer().text()).toBe(text);
    expect(Buffer.from(await answer().arrayBuffer()).toString()).toBe(text);
    expect(Buffer.from(await answer().bytes()).toString()).toBe(text);
    expect(await (await answer().blob()).text()).toBe(text);
    const copy = answer().clone();
    expect(copy.status).toBe(201);
    expect(await copy.text()).toBe(text);

    const streamed = answer();
    const body = streamed.body!;
    expect(streamed.body).toBe(body); // the same stream each time, as a Response's
    expect(await new Response(body).text()).toBe(text);
    expect(streamed.bodyUsed).toBe(true);
    // a Response built from another's body and init (as Next.js and proxies do)
    expect(await new Response(answer().body, answer()).text()).toBe(text);
  });

  it("builds no web stream until something reads its body", () => {
    const streams = ReadableStream;
    let made = 0;
    // counts what undici builds a Response's body with
    globalThis.ReadableStream = new Proxy(streams, {
      construct(target, args) {
        made++;
        return Reflect.construct(target, args);
      },
    });
    try {
      const unread = answer();
      expect(bodyText(unread)).toBe(text);
      expect(unread.headers.get("content-type")).toBe("application/json");
      expect(made).toBe(0);
    } finally {
      globalThis.ReadableStream = streams;
    }
  });
});

describe("jsonText, with a header added after it was made", () => {
  // app/api/mcp/gateways/[name]/route.ts and lib/mcp/mcp-endpoint.ts add www-authenticate so
  it("keeps the header in its clone and in the body it builds", async () => {
    const made = answer();
    made.headers.set("www-authenticate", 'Bearer resource_metadata="x"');
    const copy = made.clone();
    expect(copy.headers.get("www-authenticate")).toBe('Bearer resource_metadata="x"');
    expect(bodyText(copy)).toBe(text);
    expect(await copy.text()).toBe(text);
    // a Response made from the answer's body and init, as Next.js does
    const rebuilt = new Response(made.body, made);
    expect(rebuilt.headers.get("www-authenticate")).toBe('Bearer resource_metadata="x"');
    expect(await rebuilt.text()).toBe(text);
  });
});
