import { expect, type Page } from "@playwright/test";
import { apiClient, type ApiClient } from "@/test/support/http";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "@/test/support/factories";

// End-to-end tests seed their actors straight into the server's database file (the same admin
// verbs as `npm run admin`), then act only through the browser and the public API.
process.env.DATABASE_URL = process.env.E2E_DATABASE_URL;

/** The password factories give every reviewer. */
export const PASSWORD = "correct horse battery";

export const baseURL = `http://127.0.0.1:${Number(process.env.E2E_PORT) || 3100}`;

export type Team = {
  queue: { id: string; name: string };
  reviewers: TestReviewer[];
  agentKey: string;
  /** the agent's API client (Bearer agent key) */
  agent: ApiClient;
  /** the first reviewer's API client (Bearer personal token) */
  reviewerApi: ApiClient;
};

/** A fresh queue with reviewers and an agent key, so tests never see each other's cards. */
export async function seedTeam(
  options: { reviewers?: string[]; requiredApprovals?: number } = {},
): Promise<Team> {
  const queue = await makeQueue({ requiredApprovals: options.requiredApprovals });
  const reviewers: TestReviewer[] = [];
  for (const name of options.reviewers ?? ["Dana Reviewer"]) {
    reviewers.push(await makeReviewer({ name, queues: [{ name: queue.name }] }));
  }
  const { key } = await makeAgentKey({ name: "Support bot", queues: [queue.name] });
  return {
    queue,
    reviewers,
    agentKey: key,
    agent: apiClient(baseURL, key),
    reviewerApi: apiClient(baseURL, reviewers[0]!.token),
  };
}

export async function signIn(page: Page, reviewer: { email: string }): Promise<void> {
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(reviewer.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL("**/queue");
  // Attached, not visible: on a phone the name waits in the closed header menu.
  await expect(page.getByTestId("signed-in-as")).toBeAttached();
}

/** A paused run: POST /runs with a first batch, as an agent does. */
export async function pause(agent: ApiClient, batch: Record<string, unknown>) {
  const created = await agent.post("/runs", { batch });
  if (created.status !== 201) {
    throw new Error(`POST /runs answered ${created.status}: ${JSON.stringify(created.body)}`);
  }
  return { run: created.body, batch: created.body.batches[0] };
}
