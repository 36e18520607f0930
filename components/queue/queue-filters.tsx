"use client";

import { FilterDisclosure } from "@/components/forms/filter-disclosure";
import type { QueueFilters } from "./queue-cache";
import styles from "./queue.module.css";
import { SavedViews } from "./saved-views";

type Option = { value: string; label: string };

export function QueueFilterBar({
  filters,
  onChange,
  queues,
  agents,
  tools,
}: {
  filters: QueueFilters;
  onChange: (change: Partial<QueueFilters>) => void;
  queues: Option[];
  agents: string[];
  tools: string[];
}) {
  return (
    <FilterDisclosure id="queue-filters" active={activeFilterCount(filters)}>
      <form className={styles.filters} aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Select
          label="Status"
          value={filters.status}
          options={[
            { value: "pending", label: "Pending" },
            { value: "decided", label: "Decided" },
            { value: "cancelled", label: "Cancelled" },
            { value: "all", label: "All" },
          ]}
          onChange={(v) => onChange({ status: v as QueueFilters["status"] })}
        />
        <Select
          label="Queue"
          value={filters.queue ?? ""}
          options={[{ value: "", label: "All queues" }, ...queues]}
          onChange={(v) => onChange({ queue: v || undefined })}
        />
        <Select
          label="Agent"
          value={filters.agent ?? ""}
          options={[{ value: "", label: "All agents" }, ...withCurrent(agents, filters.agent)]}
          onChange={(v) => onChange({ agent: v || undefined })}
        />
        <Select
          label="Tool"
          value={filters.tool ?? ""}
          options={[{ value: "", label: "All tools" }, ...withCurrent(tools, filters.tool)]}
          onChange={(v) => onChange({ tool: v || undefined })}
        />
        <Select
          label="Kind"
          value={filters.kind ?? ""}
          options={[
            { value: "", label: "Actions and plans" },
            { value: "action", label: "Actions" },
            { value: "plan", label: "Plans" },
          ]}
          onChange={(v) => onChange({ kind: (v || undefined) as QueueFilters["kind"] })}
        />
        <SavedViews filters={filters} onApply={onChange} queues={queues} />
      </form>
    </FilterDisclosure>
  );
}

/** Filters that narrow the queue: every one but the default "Pending" status. */
function activeFilterCount(filters: QueueFilters): number {
  const narrowing = [filters.queue, filters.agent, filters.tool, filters.kind];
  return narrowing.filter(Boolean).length + (filters.status === "pending" ? 0 : 1);
}

/** A filter from a shared link stays selectable even before a matching card has loaded. */
function withCurrent(names: string[], current: string | undefined): Option[] {
  const all = current && !names.includes(current) ? [...names, current] : names;
  return all.map((name) => ({ value: name, label: name }));
}

function Select({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: Option[];
  onChange: (value: string) => void;
}) {
  const id = `filter-${label.toLowerCase()}`;
  return (
    <div className={styles.filter}>
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}
