import type { createTransport } from "nodemailer";
import { setting } from "@/lib/config/settings";

// The SMTP connection: SMTP_URL (`smtp://user:pass@host:587`, `smtps://…:465`) as nodemailer
// reads it, and MAIL_FROM for the sender. Without SMTP_URL no email is planned or sent (the
// settings page says so). The URL holds the SMTP password: it is never logged or put in errors.

/** Each phase of a send (connecting, the greeting, any silence) may take this long. */
export function smtpTimeoutMs(): number {
  return setting("SMTP_TIMEOUT_MS");
}

/** Whether this server sends email. */
export function emailConfigured(): boolean {
  return Boolean(setting("SMTP_URL"));
}

export function mailFrom(): string {
  return setting("MAIL_FROM");
}

type Transport = ReturnType<typeof createTransport>;
let cached: { url: string; transport: Transport } | undefined;

/** nodemailer is loaded on the first send: a server without SMTP_URL never pays for it at start. */
async function transport(): Promise<Transport> {
  const url = setting("SMTP_URL");
  if (!url) throw new Error("SMTP_URL is not set: this server sends no email.");
  if (cached?.url !== url) {
    const { createTransport } = await import("nodemailer");
    cached?.transport.close();
    // Short timeouts: a mail server that hangs must not hold a delivery (the outbox retries it).
    // One connection per message, no pool: a message is a few per card and reviewer.
    cached = {
      url,
      transport: createTransport({
        url,
        connectionTimeout: smtpTimeoutMs(),
        greetingTimeout: smtpTimeoutMs(),
        socketTimeout: smtpTimeoutMs(),
      }),
    };
  }
  return cached.transport;
}

export type OutgoingMail = {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** stable per outbox row: a mail system that sees a resend of it can drop the copy */
  messageId: string;
};

/** Sends one message; throws (without the URL's credentials) when the server does not take it. */
export async function sendMail(mail: OutgoingMail): Promise<void> {
  try {
    await (
      await transport()
    ).sendMail({
      from: mailFrom(),
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: mail.messageId,
      // Mail systems should not answer robots' replies back to us.
      headers: { "Auto-Submitted": "auto-generated" },
    });
  } catch (cause) {
    throw new Error(describeFailure(cause));
  }
}

/** The failure in words for the outbox row, with any password of SMTP_URL taken out. */
function describeFailure(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  const code = (cause as { code?: unknown })?.code;
  let text = typeof code === "string" ? `${code}: ${message}` : message;
  try {
    const password = new URL(setting("SMTP_URL") ?? "").password;
    if (password) text = text.replaceAll(password, "***");
    if (password) text = text.replaceAll(decodeURIComponent(password), "***");
  } catch {
    // not a URL: nothing of it to hide
  }
  return text.slice(0, 500);
}
