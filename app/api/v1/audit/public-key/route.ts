import { auditPublicKey } from "@/lib/audit/signing-key";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json(await auditPublicKey(actor)));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
