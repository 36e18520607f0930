import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { resolveAgent } from "@/lib/agents/resolve-agent";
import { revokeAgentKey } from "@/lib/agents/revoke-agent-key";
import { ApiError } from "@/lib/errors";
import { OPERATOR } from "@/lib/queues/queue-access";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue } from "../support/factories";

// `--name` in the admin CLI (and `agent` in rules): a name means one key. Revoking the extra keys
// of a duplicated name (as earlier demos left them) makes the name usable again.

beforeAll(async () => {
  await freshDatabase("resolve-agent");
  await makeQueue({ name: "General" });
});

async function refusal(agent: string): Promise<string> {
  try {
    await resolveAgent(getDb(), agent, "name");
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return (error as ApiError).message;
  }
  throw new Error(`'${agent}' resolved`);
}

describe("resolveAgent", () => {
  it("finds a key by id or by its unique name, and refuses unknown ones", async () => {
    const key = await makeAgentKey({ name: "Solo", queues: ["General"] });
    expect(await resolveAgent(getDb(), "Solo")).toBe(key.id);
    expect(await resolveAgent(getDb(), key.id)).toBe(key.id);
    expect(await refusal("Nobody")).toBe("No agent key has that id or name.");
  });

  it("refuses a name two active keys share, and means the one left active once the other is revoked", async () => {
    const older = await makeAgentKey({ name: "Twin", queues: ["General"] });
    const newer = await makeAgentKey({ name: "Twin", queues: ["General"] });
    expect(await refusal("Twin")).toBe("Several agent keys have that name; use the key's id.");
    expect(await resolveAgent(getDb(), older.id)).toBe(older.id);
    await revokeAgentKey(OPERATOR, older.id);
    expect(await resolveAgent(getDb(), "Twin")).toBe(newer.id);
    // both revoked: ambiguous again (nothing to prefer)
    await revokeAgentKey(OPERATOR, newer.id);
    expect(await refusal("Twin")).toBe("Several agent keys have that name; use the key's id.");
  });
});
