import { getAuth } from "@/lib/auth/better-auth";
import { CLIENT_ADDRESS_HEADER, clientAddress } from "@/lib/http/client-address";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// better-auth's own endpoints: sign in, sign out, session. Its sign-in limit counts per
// CLIENT_ADDRESS_HEADER; under `next dev`, where no server stamped that header, a client's own
// value is replaced by the fallback address (lib/http/client-address.ts).
async function handle(request: Request): Promise<Response> {
  const address = clientAddress(request.headers);
  if (request.headers.get(CLIENT_ADDRESS_HEADER) !== address) {
    const headers = new Headers(request.headers);
    headers.set(CLIENT_ADDRESS_HEADER, address);
    request = new Request(request, { headers });
  }
  return (await getAuth()).handler(request);
}

export { handle as GET, handle as POST };

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
