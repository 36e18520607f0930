"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { QueueFilters } from "./queue-cache";
import styles from "./queue.module.css";

// Named filters saved on the server for a queue and shared with its members (GET/POST/DELETE
// /api/v1/views). Applying one writes its filters, and its queue, into the URL like any filter.

export const VIEWS_KEY = ["views"] as const;

type ViewFilters = Pick<QueueFilters, "agent" | "tool" | "kind"> & {
  status?: QueueFilters["status"];
};

export type SavedView = {
  id: string;
  name: string;
  queue: { id: string; name: string };
  filters: ViewFilters;
  createdBy: { id: string; name: string };
  canDelete: boolean;
};

type Option = { value: string; label: string };

async function callApi<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`/api/v1${path}`, {
    ...init,
    headers: { accept: "application/json", "content-type": "application/json" },
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    throw new Error(body?.error?.message ?? `The server answered ${response.status}.`);
  }
  return body as T;
}

/** The URL filters a view stands for (unset ones cleared, so nothing from the last view lingers). */
function filtersOf(view: SavedView): QueueFilters {
  return {
    queue: view.queue.id,
    agent: view.filters.agent,
    tool: view.filters.tool,
    kind: view.filters.kind,
    status: view.filters.status ?? "pending",
  };
}

function sameFilters(a: QueueFilters, b: QueueFilters): boolean {
  return (
    a.queue === b.queue &&
    a.agent === b.agent &&
    a.tool === b.tool &&
    a.kind === b.kind &&
    a.status === b.status
  );
}

export function SavedViews({
  filters,
  onApply,
  queues,
}: {
  filters: QueueFilters;
  onApply: (filters: QueueFilters) => void;
  queues: Option[];
}) {
  const client = useQueryClient();
  const views = useQuery({
    queryKey: VIEWS_KEY,
    queryFn: () => callApi<{ views: SavedView[] }>("/views").then((r) => r.views),
  });
  const [saving, setSaving] = useState(false);
  const [name, setName] = useState("");
  const [queueId, setQueueId] = useState("");

  const save = useMutation({
    mutationFn: (input: { queueId: string; name: string; filters: ViewFilters }) =>
      callApi<SavedView>("/views", { method: "POST", body: JSON.stringify(input) }),
    onSuccess: (view) => {
      setSaving(false);
      setName("");
      onApply(filtersOf(view));
      return client.invalidateQueries({ queryKey: VIEWS_KEY });
    },
  });
  const remove = useMutation({
    mutationFn: (view: SavedView) =>
      callApi<SavedView>(`/views/${encodeURIComponent(view.id)}`, { method: "DELETE" }),
    onSuccess: () => client.invalidateQueries({ queryKey: VIEWS_KEY }),
  });

  const all = views.data ?? [];
  const current = all.find((view) => sameFilters(filtersOf(view), filters));
  const groups = new Map<string, SavedView[]>();
  for (const view of all)
    groups.set(view.queue.name, [...(groups.get(view.queue.name) ?? []), view]);

  const openSaveForm = () => {
    save.reset();
    setQueueId(filters.queue ?? queues[0]?.value ?? "");
    setSaving(true);
  };
  const submit = () => {
    const { agent, tool, kind, status } = filters;
    save.mutate({
      queueId,
      name,
      filters: Object.fromEntries(
        Object.entries({ agent, tool, kind, status }).filter(([, v]) => v !== undefined),
      ),
    });
  };
  const error = views.error ?? save.error ?? remove.error;

  return (
    <div className={styles.savedViews} data-testid="saved-views">
      <div className={styles.filter}>
        <label htmlFor="filter-views">Views</label>
        <select
          id="filter-views"
          value={current?.id ?? ""}
          onChange={(e) => {
            const view = all.find((v) => v.id === e.target.value);
            if (view) onApply(filtersOf(view));
          }}
        >
          <option value="">{all.length ? "Choose a view…" : "No saved views"}</option>
          {[...groups].map(([queueName, inQueue]) => (
            <optgroup key={queueName} label={queueName}>
              {inQueue.map((view) => (
                <option key={view.id} value={view.id}>
                  {view.name}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
      </div>
      {current?.canDelete && (
        <button
          type="button"
          className="shell-button"
          disabled={remove.isPending}
          onClick={() => remove.mutate(current)}
        >
          Delete view <span className="visually-hidden">{current.name}</span>
        </button>
      )}
      {saving ? (
        // Not a <form>: this sits inside the filter bar's form, and forms do not nest.
        <div role="group" aria-label="Save view" className={styles.saveView}>
          <div className={styles.filter}>
            <label htmlFor="save-view-name">View name</label>
            <input
              id="save-view-name"
              value={name}
              maxLength={60}
              autoFocus
              onChange={(e) => setName(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter") submit();
                if (e.key === "Escape") setSaving(false);
              }}
            />
          </div>
          <div className={styles.filter}>
            <label htmlFor="save-view-queue">For queue</label>
            <select
              id="save-view-queue"
              value={queueId}
              onChange={(e) => setQueueId(e.target.value)}
            >
              {queues.map((q) => (
                <option key={q.value} value={q.value}>
                  {q.label}
                </option>
              ))}
            </select>
          </div>
          <button
            type="button"
            className="shell-button"
            disabled={save.isPending || !name.trim() || !queueId}
            onClick={submit}
          >
            Save
          </button>
          <button
            type="button"
            className="shell-button"
            onClick={() => {
              setSaving(false);
              save.reset();
            }}
          >
            Cancel
          </button>
        </div>
      ) : (
        queues.length > 0 && (
          <button type="button" className="shell-button" onClick={openSaveForm}>
            Save view…
          </button>
        )
      )}
      {error && (
        <p className={styles.viewError} role="alert">
          {error.message}
        </p>
      )}
    </div>
  );
}
