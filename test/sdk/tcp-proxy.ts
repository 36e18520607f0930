import { connect, createServer, type Socket } from "node:net";

// A loopback TCP proxy in front of a test server, to break connections the way networks do:
// cut every open connection (a stream mid-wait), refuse new ones for a while, or let a request
// through and drop its answer (the server did the work; the client never hears of it).

export type TcpProxy = {
  baseUrl: string;
  /** the head (request line and headers) of every request that went through, in order */
  requests: string[];
  /** destroys every open connection */
  cutAll: () => void;
  /** while true, new connections are closed at once (like a server that is down) */
  refuse: (on: boolean) => void;
  /** the next request whose head contains `text` reaches the server, but its answer is dropped */
  dropAnswerTo: (text: string) => void;
  close: () => Promise<void>;
};

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const requests: string[] = [];
  const drops: string[] = [];
  let refusing = false;

  const server = createServer((client) => {
    if (refusing) return client.destroy();
    const upstream = connect(targetPort, "127.0.0.1");
    open.add(client).add(upstream);
    let dropAnswer = false;
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("data", (chunk: Buffer) => {
      const text = chunk.toString("latin1");
      if (/^[A-Z]+ \/\S* HTTP\/1\.1\r\n/.test(text)) {
        const headEnd = text.indexOf("\r\n\r\n");
        const head = headEnd >= 0 ? text.slice(0, headEnd) : text;
        requests.push(head);
        const match = drops.findIndex((wanted) => head.includes(wanted));
        if (match >= 0) {
          drops.splice(match, 1);
          dropAnswer = true;
        }
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (dropAnswer) return end();
      client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on("error", end);
      socket.on("close", end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    cutAll: () => open.forEach((socket) => socket.destroy()),
    refuse: (on) => (refusing = on),
    dropAnswerTo: (text) => drops.push(text),
    close: async () => {
      open.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
