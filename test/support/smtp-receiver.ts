import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer, type SMTPServerSession } from "smtp-server";

// A real SMTP server in the test process (smtp-server), for the app's email to arrive at: every
// message it accepts is parsed (mailparser) and kept. It can be stopped and started again on the
// same port (the mail server is down), and can hold the next message without answering (a send
// in flight when the app is killed): a message is accepted only when its "250" is answered on a
// connection still open, as a real mail server commits it.

export type ReceivedMail = { to: string[]; parsed: ParsedMail; raw: string };

export type SmtpReceiver = {
  port: number;
  /** the SMTP_URL to give the app (with credentials, which the server checks) */
  url: string;
  received: ReceivedMail[];
  /** messages to `address`, oldest first */
  to: (address: string) => ReceivedMail[];
  /** hold the next message: received in full, never answered while held */
  holdNext: () => void;
  /** the Message-IDs of the messages held, unanswered */
  held: () => string[];
  /** whether every held message's connection has closed (its client is gone) */
  heldClosed: () => boolean;
  /** answers the held messages (those whose connection is still open are accepted) */
  release: () => void;
  stop: () => Promise<void>;
  start: () => Promise<void>;
};

export const SMTP_USER = "countersign";
export const SMTP_PASSWORD = "smtp-pass-never-in-mail";

export async function startSmtpReceiver(port: number): Promise<SmtpReceiver> {
  const received: ReceivedMail[] = [];
  const closed = new Set<string>();
  let holding = false;
  const heldReplies: { session: SMTPServerSession; messageId: string; accept: () => void }[] = [];
  let server: SMTPServer | null = null;

  const make = () =>
    new SMTPServer({
      // plain SMTP on loopback: no STARTTLS (its self-signed certificate would be refused)
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      logger: false,
      closeTimeout: 1000,
      onAuth(auth, _session, callback) {
        if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD)
          return callback(null, { user: SMTP_USER });
        callback(new Error("Invalid username or password"));
      },
      onClose(session) {
        closed.add(session.id);
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", async () => {
          const raw = Buffer.concat(chunks).toString("utf8");
          const parsed = await simpleParser(raw);
          const accept = () => {
            if (closed.has(session.id)) return; // the client is gone: it never heard "250"
            received.push({
              to: session.envelope.rcptTo.map((r) => r.address),
              parsed,
              raw,
            });
            callback();
          };
          if (holding) {
            holding = false;
            heldReplies.push({ session, messageId: parsed.messageId ?? "", accept });
          } else accept();
        });
      },
    });

  const receiver: SmtpReceiver = {
    port,
    url: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${port}`,
    received,
    to: (address) => received.filter((m) => m.to.includes(address)),
    holdNext: () => void (holding = true),
    held: () => heldReplies.map((reply) => reply.messageId),
    heldClosed: () => heldReplies.every((reply) => closed.has(reply.session.id)),
    release: () => {
      for (const reply of heldReplies.splice(0)) reply.accept();
    },
    async start() {
      server = make();
      await new Promise<void>((resolve, reject) => {
        server!.once("error", reject);
        server!.listen(port, "127.0.0.1", () => resolve());
      });
    },
    async stop() {
      const stopping = server;
      server = null;
      if (stopping) await new Promise<void>((resolve) => stopping.close(() => resolve()));
    },
  };
  await receiver.start();
  return receiver;
}
