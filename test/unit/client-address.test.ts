import { describe, expect, it } from "vitest";
import {
  parseTrustedProxies,
  rateLimitSubject,
  resolveClientAddress,
} from "@/lib/auth/client-address";

// Who the client is (lib/auth/client-address.ts): the socket, unless it is a trusted proxy; then
// X-Forwarded-For from the right, past trusted proxies.

describe("resolveClientAddress", () => {
  const none = parseTrustedProxies("");
  const proxies = parseTrustedProxies(" 10.0.0.0/8 , 127.0.0.1,::1 ");

  it("is the socket when no proxy is trusted, whatever the header says", () => {
    expect(resolveClientAddress("192.0.2.1", "203.0.113.9", none)).toBe("192.0.2.1");
    expect(resolveClientAddress("::ffff:192.0.2.1", undefined, none)).toBe("192.0.2.1");
  });

  it("walks the header from the right past trusted proxies", () => {
    expect(resolveClientAddress("127.0.0.1", "6.6.6.6, 203.0.113.9, 10.1.2.3", proxies)).toBe(
      "203.0.113.9",
    );
    expect(resolveClientAddress("::1", "203.0.113.9", proxies)).toBe("203.0.113.9");
    // Nothing forwarded, or only proxies: the last trusted hop.
    expect(resolveClientAddress("127.0.0.1", undefined, proxies)).toBe("127.0.0.1");
    expect(resolveClientAddress("127.0.0.1", "10.0.0.5", proxies)).toBe("10.0.0.5");
    // Garbage a proxy would never append stops the walk at the hop that passed it on.
    expect(resolveClientAddress("127.0.0.1", "203.0.113.9, nonsense", proxies)).toBe("127.0.0.1");
    // An untrusted socket's header is ignored.
    expect(resolveClientAddress("192.0.2.1", "203.0.113.9", proxies)).toBe("192.0.2.1");
  });

  it("refuses a TRUSTED_PROXIES entry that is not an address or range", () => {
    for (const bad of ["localhost", "10.0.0.0/33", "10.0.0.1/8/1", "::1/abc", "10.0.0.1/"]) {
      expect(() => parseTrustedProxies(bad)).toThrow(/TRUSTED_PROXIES/);
    }
  });
});

describe("rateLimitSubject", () => {
  it("counts IPv4 by address and IPv6 by its /64", () => {
    expect(rateLimitSubject("192.0.2.1")).toBe("192.0.2.1");
    expect(rateLimitSubject("2001:db8:1:2::abcd")).toBe("2001:0db8:0001:0002::/64");
    expect(rateLimitSubject("2001:db8:1:2:3:4:5:6")).toBe("2001:0db8:0001:0002::/64");
    expect(rateLimitSubject("::1")).toBe("0000:0000:0000:0000::/64");
  });
});
