import { eq, or } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { agentKeys } from "@/db/schema";
import { InvalidRequestError } from "@/lib/errors";

/**
 * An agent key by id or name. A name must be unambiguous; when several keys share it and only one
 * is not revoked, that one is meant (revoking duplicates is how a name is made unique again).
 */
export async function resolveAgent(db: Executor, agent: string, path = "agent"): Promise<string> {
  const found = await db
    .select({ id: agentKeys.id, revokedAt: agentKeys.revokedAt })
    .from(agentKeys)
    .where(or(eq(agentKeys.id, agent), eq(agentKeys.name, agent)));
  const byId = found.find((key) => key.id === agent);
  if (byId) return byId.id;
  const active = found.filter((key) => key.revokedAt === null);
  if (found.length === 1) return found[0]!.id;
  if (found.length > 1 && active.length === 1) return active[0]!.id;
  throw new InvalidRequestError(
    found.length
      ? "Several agent keys have that name; use the key's id."
      : "No agent key has that id or name.",
    [
      {
        path,
        message: found.length
          ? "several agent keys have that name; use the key's id"
          : "no agent key has that id or name",
      },
    ],
  );
}
