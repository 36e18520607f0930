import type { Metadata } from "next";
import { McpGateways } from "@/components/mcp-gateways/mcp-gateways";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { getDb } from "@/db/client";
import { listAgentKeys } from "@/lib/agents/agent-keys";
import { listMcpGateways } from "@/lib/mcp-gateways/list-mcp-gateways";
import { isInstallationAdmin } from "@/lib/queues/queue-access";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "MCP gateways · Countersign" };

export default async function McpGatewaysPage() {
  const reviewer = await currentReviewer();
  const admin = await isInstallationAdmin(getDb(), reviewer.id);
  const gateways = await listMcpGateways(reviewer);
  // The keys a gateway may be given (admins only edit): every key still in use.
  const agents = admin
    ? (await listAgentKeys(reviewer))
        .filter((agent) => agent.revokedAt === null)
        .map(({ id, name }) => ({ id, name }))
    : [];
  return (
    <>
      <header className={styles.header}>
        <div>
          <h1 className={styles.title}>MCP gateways</h1>
          <p className={styles.lead}>
            Remote MCP servers Countersign serves to your agents: an agent connects to the
            gateway&apos;s endpoint with its own agent key, every tool call it makes waits for the
            policies or a person, and the server&apos;s own token stays here.
            {admin ? "" : " Only an admin adds or changes them."}
          </p>
        </div>
      </header>
      <McpGateways gateways={gateways} agents={agents} canManage={admin} />
    </>
  );
}
