"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { setAgentModeAction } from "@/app/(reviewer)/policies/actions";
import type { ActionFailure } from "@/app/action-result";
import { FormError } from "@/components/queue-settings/form-error";
import settings from "@/components/queue-settings/queue-settings.module.css";
import { Badge } from "@/components/run-timeline/badges";
import type { AgentMode } from "@/db/schema";
import type { AgentKeyView } from "@/lib/agents/agent-keys";
import styles from "./policies.module.css";
import { ScrollBox } from "@/components/app-shell/scroll-box";

export const MODES: Record<AgentMode, string> = {
  ask: "Rules apply; a call no rule settles goes to a reviewer.",
  allow: "Every call is approved unless a deny rule blocks it.",
  deny: "Deny and allow rules apply; a call that would need a reviewer is rejected.",
  off: "No gate: every call is approved, rules are not read.",
};

/**
 * Admins only: each agent key's mode, the switch that decides whether its calls meet the rules
 * at all. It holds in every queue the agent reaches.
 */
export function AgentModes({ agents }: { agents: AgentKeyView[] }) {
  const router = useRouter();
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // The mode picked shows at once; the stored one replaces it when the page's data reloads.
  const [chosen, setChosen] = useState<Record<string, AgentMode>>({});
  const [pending, startTransition] = useTransition();

  function change(agent: AgentKeyView, mode: AgentMode) {
    setChosen((modes) => ({ ...modes, [agent.id]: mode }));
    startTransition(async () => {
      const result = await setAgentModeAction(agent.id, mode);
      if (!result.ok) {
        setChosen(({ [agent.id]: _dropped, ...others }) => others);
        setSaved(null);
        return setFailure(result);
      }
      setFailure(null);
      setSaved(`Saved: ${agent.name} is now in mode ${result.agent.mode}.`);
      router.refresh();
    });
  }

  return (
    <section className={settings.panel} aria-labelledby="agents-title" data-testid="agent-modes">
      <h2 id="agents-title" className={settings.panelTitle}>
        Agents
      </h2>
      <p className={styles.intro}>
        An agent&apos;s mode holds in every queue it reaches. Only admins see and change it.
      </p>
      <FormError failure={failure} />
      <p className={settings.status} role="status">
        {saved}
      </p>
      {agents.length === 0 ? (
        <p className={styles.none}>No agent keys yet.</p>
      ) : (
        <ScrollBox label="Agent keys and their modes" className={settings.tableWrap}>
          <table className={settings.table}>
            <caption className="visually-hidden">Agent keys and their modes</caption>
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Default queue</th>
                <th scope="col">Owner</th>
                <th scope="col">Mode</th>
              </tr>
            </thead>
            <tbody>
              {agents.map((agent) => {
                const mode = chosen[agent.id] ?? agent.mode;
                return (
                  <tr
                    key={agent.id}
                    data-testid="agent-row"
                    data-agent-id={agent.id}
                    className={agent.revokedAt ? settings.muted : undefined}
                  >
                    <td>
                      <span className={styles.ruleName}>{agent.name}</span>{" "}
                      <code className={styles.keyPrefix}>{agent.keyPrefix}…</code>
                    </td>
                    <td className={styles.nowrap}>{agent.defaultQueue.name}</td>
                    <td>{agent.owner?.name ?? "—"}</td>
                    <td className={styles.modeCell}>
                      {agent.revokedAt ? (
                        <Badge tone="neutral">Revoked</Badge>
                      ) : (
                        <div className={styles.mode}>
                          <select
                            className={settings.inlineSelect}
                            aria-label={`Mode of ${agent.name}`}
                            aria-describedby={`mode-help-${agent.id}`}
                            value={mode}
                            disabled={pending}
                            onChange={(event) => change(agent, event.target.value as AgentMode)}
                          >
                            {(Object.keys(MODES) as AgentMode[]).map((mode) => (
                              <option key={mode} value={mode}>
                                {mode}
                              </option>
                            ))}
                          </select>
                          <span
                            id={`mode-help-${agent.id}`}
                            className={`${styles.modeHelp} ${mode === "ask" ? "" : styles.modeWarn}`}
                          >
                            {MODES[mode]}
                          </span>
                        </div>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </section>
  );
}
