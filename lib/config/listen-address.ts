import { isIP } from "node:net";
import { setting } from "./settings";

// The address `npm start` listens on: HOSTNAME, as Next.js's own servers read it, but only when
// it is an IP address or "localhost". Docker (and some shells) export HOSTNAME as the machine's
// name; taken as a listen address that name resolves to the machine's outward interface and
// the server would be reachable from the network without anyone asking for it. So a name is
// ignored with a warning and the default stays loopback; 0.0.0.0 or :: must be asked for.

export const DEFAULT_LISTEN_ADDRESS = "127.0.0.1";

export type ListenAddress = { address: string; warning?: string };

export function listenAddress(): ListenAddress {
  const value = setting("HOSTNAME")?.trim();
  if (!value) return { address: DEFAULT_LISTEN_ADDRESS };
  const bare = value.replace(/^\[(.*)\]$/, "$1"); // [::1] as written in URLs
  if (isIP(bare) || bare.toLowerCase() === "localhost") return { address: bare };
  return {
    address: DEFAULT_LISTEN_ADDRESS,
    warning:
      `HOSTNAME is "${value}", a machine name rather than an address to listen on (Docker sets it so): ` +
      `listening on ${DEFAULT_LISTEN_ADDRESS}. Set HOSTNAME=0.0.0.0 (or ::) to listen on every interface, or to one IP address.`,
  };
}

/** The address people reach this installation at, for the links it sends and its own origin. */
export function publicBaseUrl(): string {
  const configured = setting("PUBLIC_URL");
  if (configured) return configured.replace(/\/+$/, "");
  // Unset, links use the address the server listens on (127.0.0.1 by default), the one its own
  // start-up line and the demo use: an invite made on 127.0.0.1 that pointed at `localhost` was
  // another origin, with no session (issue 26). A server on every interface cannot know which of
  // its addresses people reach, so it says loopback; set PUBLIC_URL there.
  const { address } = listenAddress();
  const host =
    address === "0.0.0.0" || address === "::"
      ? DEFAULT_LISTEN_ADDRESS
      : address.includes(":")
        ? `[${address}]`
        : address;
  return `http://${host}:${setting("PORT")}`;
}
