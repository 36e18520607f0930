import { beforeAll, describe, expect, it } from "vitest";
import { handlerOf } from "@/app/api/v1/routes";
import { defineEndpoint } from "@/lib/contract/endpoint";
import { freshDatabase } from "../support/database";
import { makeTeam } from "../support/factories";

// Defence in depth: the dispatch refuses a caller of the wrong kind before an endpoint's handler
// runs, as its definition states it (`auth`), whatever the handler checks itself. The endpoints
// here check nothing, as a handler written carelessly would not.

const reached: string[] = [];
const endpointFor = (auth: "agent" | "reviewer" | "either") =>
  defineEndpoint({
    method: "GET",
    path: `/dispatch-test/${auth}`,
    auth,
    summary: "test",
    tag: "Runs",
    operationId: `dispatchTest_${auth}`,
    ok: { status: 200, schema: "Ok" },
    errors: [],
    async handler({ actor }) {
      reached.push(`${auth}:${actor.kind}`);
      return Response.json({ kind: actor.kind });
    },
  });

let tokens: { agent: string; reviewer: string };

beforeAll(async () => {
  await freshDatabase("dispatch-caller-kind");
  const team = await makeTeam();
  tokens = { agent: team.agent.key, reviewer: team.reviewer.token };
});

async function call(auth: "agent" | "reviewer" | "either", as: "agent" | "reviewer") {
  const request = new Request(`http://127.0.0.1/api/v1/dispatch-test/${auth}`, {
    headers: { authorization: `Bearer ${tokens[as]}` },
  });
  const response = await handlerOf(endpointFor(auth))(request, { params: Promise.resolve({}) });
  return { status: response.status, body: await response.json() };
}

describe("the dispatch checks the caller's kind an endpoint is defined for", () => {
  it("refuses an agent key at a reviewer's endpoint, and a reviewer at an agent's", async () => {
    reached.length = 0;
    const agentAtReviewer = await call("reviewer", "agent");
    expect(agentAtReviewer.status).toBe(403);
    expect(agentAtReviewer.body.error.code).toBe("forbidden");
    const reviewerAtAgent = await call("agent", "reviewer");
    expect(reviewerAtAgent.status).toBe(403);
    expect(reviewerAtAgent.body.error.code).toBe("forbidden");
    expect(reached).toEqual([]);
  });

  it("lets the defined kind through, and either kind where the definition says either", async () => {
    reached.length = 0;
    expect((await call("agent", "agent")).status).toBe(200);
    expect((await call("reviewer", "reviewer")).status).toBe(200);
    expect((await call("either", "agent")).status).toBe(200);
    expect((await call("either", "reviewer")).status).toBe(200);
    expect(reached).toEqual([
      "agent:agent",
      "reviewer:reviewer",
      "either:agent",
      "either:reviewer",
    ]);
  });
});
