import { getAuth } from "@/lib/auth/better-auth";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// better-auth's own endpoints: sign in, sign out, session.
async function handle(request: Request): Promise<Response> {
  return (await getAuth()).handler(request);
}

export { handle as GET, handle as POST };

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
