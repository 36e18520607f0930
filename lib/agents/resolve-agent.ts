import { eq, or } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { agentKeys } from "@/db/schema";
import { InvalidRequestError } from "@/lib/errors";

/** An agent key by id or name (a name must be unambiguous). */
export async function resolveAgent(db: Executor, agent: string, path = "agent"): Promise<string> {
  const found = await db
    .select({ id: agentKeys.id })
    .from(agentKeys)
    .where(or(eq(agentKeys.id, agent), eq(agentKeys.name, agent)));
  if (found.length !== 1) {
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
  return found[0]!.id;
}
