import { getClient } from "@/db/client";
import { describeVerdict, chainRows, verifyChain } from "@/lib/audit/verify-chain";
import { verifyExportFile } from "@/lib/audit/verify-export";
import { UsageError } from "./cli-support";

export const AUDIT_CLI_USAGE = `  audit verify [--anchor SEQ:HASH]...
                    walk the event log's hash chain; exit 1 naming the first row that does not match
                    (or a head the server logged that the chain no longer holds)
  audit verify-export <file> [--public-key KEY]
                    check a history or audit export and its signed head, without the database;
                    exit 0 only with the server's key pinned (GET /api/v1/audit/public-key),
                    2 when the file holds together but its signer was not checked, 1 when not`;

/** A check that failed: printed as is, and the command exits with `exitCode` (1 unless said). */
export class VerificationFailed extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export async function runAuditCommand(
  verb: string | undefined,
  rest: string[],
  values: { "public-key"?: string; anchor?: string[] },
): Promise<string> {
  if (verb === "verify") {
    if (rest.length > 0) throw new UsageError("audit verify takes no arguments.");
    const client = getClient();
    const columns = await client.execute("select name from pragma_table_info('events')");
    if (!columns.rows.some((row) => row[0] === "hash"))
      throw new VerificationFailed(
        "The event log has no hash chain yet: start the server (or npm run db:migrate) once to upgrade the database.",
      );
    const anchors = (values.anchor ?? []).map((text) => {
      const match = /^(\d+):([0-9a-f]{64})$/.exec(text.trim());
      if (!match)
        throw new UsageError(`--anchor takes SEQ:HASH (as the server logs them), not '${text}'.`);
      return { seq: Number(match[1]), hash: match[2]! };
    });
    const verdict = await verifyChain(chainRows(client), anchors);
    if (!verdict.ok) throw new VerificationFailed(describeVerdict(verdict));
    return describeVerdict(verdict);
  }
  if (verb === "verify-export") {
    if (rest.length !== 1) throw new UsageError("audit verify-export takes one file.");
    const verdict = verifyExportFile(rest[0]!, values["public-key"]);
    if (!verdict.ok) throw new VerificationFailed(verdict.message);
    // Anyone can sign a rewritten file with a key of their own: a script that trusts the exit code
    // must not read "verified" unless the server's key was the one checked (found by review).
    if (!values["public-key"]) throw new VerificationFailed(verdict.message, 2);
    return verdict.message;
  }
  throw new UsageError(`Unknown command 'audit ${verb ?? ""}'.`);
}
