import { getDb } from "@/db/client";
import { authenticate } from "@/lib/auth/actor";
import { makeTeam } from "../support/factories";

/**
 * A fresh team (queue, agent key, reviewer) on the current database, with the two actors the
 * verbs take: the benches that call verbs in-process (statements, wal-pages, sqld-cost) start so.
 */
export async function teamActors() {
  const { agent, reviewer } = await makeTeam();
  const as = (secret: string) =>
    authenticate(getDb(), new Headers({ authorization: `Bearer ${secret}` }));
  return {
    agent,
    reviewer,
    agentActor: await as(agent.key),
    reviewerActor: await as(reviewer.token),
  };
}
