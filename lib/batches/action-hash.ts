import canonicalize from "canonicalize";
import { sha256Hex } from "@/lib/ids";

/**
 * Ties an approval to the exact action approved: SHA-256 over the tool name and the RFC 8785
 * canonical JSON of its args, so key order and whitespace never change it.
 */
export function actionHash(toolName: string, args: unknown): string {
  return sha256Hex(`${toolName}\n${canonicalize(args ?? null)}`);
}
