import Link from "next/link";
import type { HistoryFilterOptions } from "@/lib/history/filter-options";
import type { FilterValues } from "./history-query";
import styles from "./history.module.css";

type Option = { value: string; label: string };

function Select({
  name,
  label,
  value,
  any,
  options,
}: {
  name: string;
  label: string;
  value: string | undefined;
  any: string;
  options: Option[];
}) {
  // A value from the URL that is not among the options (say, a queue since left) stays selectable.
  const known = value === undefined || options.some((o) => o.value === value);
  return (
    <div className={styles.field}>
      <label htmlFor={`filter-${name}`}>{label}</label>
      <select id={`filter-${name}`} name={name} defaultValue={value ?? ""}>
        <option value="">{any}</option>
        {!known && <option value={value}>{value}</option>}
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

const toOptions = (items: { id: string; name: string }[]): Option[] =>
  items.map((item) => ({ value: item.id, label: item.name }));

/** The filters as a plain GET form: they live in the URL, so a filtered view can be shared. */
export function HistoryFilters({
  filters,
  options,
  timeZone,
}: {
  filters: FilterValues;
  options: HistoryFilterOptions;
  /** the zone whose calendar days From and To are */
  timeZone: string;
}) {
  const filtered = Object.keys(filters).length > 0;
  return (
    <form method="get" action="/history" className={styles.filters} aria-label="Filter decisions">
      <Select
        name="queue"
        label="Queue"
        value={filters.queue}
        any="All your queues"
        options={toOptions(options.queues)}
      />
      <Select
        name="agent"
        label="Agent"
        value={filters.agent}
        any="Any agent"
        options={toOptions(options.agents)}
      />
      <div className={styles.field}>
        <label htmlFor="filter-tool">Tool</label>
        <input
          id="filter-tool"
          name="tool"
          type="text"
          defaultValue={filters.tool ?? ""}
          placeholder="e.g. refund_order"
          spellCheck={false}
          autoComplete="off"
        />
      </div>
      <Select
        name="outcome"
        label="Outcome"
        value={filters.outcome}
        any="Any outcome"
        options={[
          { value: "approved", label: "Approved" },
          { value: "rejected", label: "Rejected" },
          { value: "mixed", label: "Mixed" },
        ]}
      />
      <Select
        name="decidedBy"
        label="Decided by"
        value={filters.decidedBy}
        any="Anyone"
        options={toOptions(options.reviewers)}
      />
      <Select
        name="source"
        label="Decided through"
        value={filters.source}
        any="Any way"
        options={[
          { value: "reviewer", label: "A reviewer" },
          { value: "policy", label: "A policy (allowed or blocked)" },
          { value: "memory", label: "A remembered approval" },
          { value: "timeout", label: "The deadline" },
        ]}
      />
      <Select
        name="kind"
        label="Kind"
        value={filters.kind}
        any="Actions and plans"
        options={[
          { value: "action", label: "Actions" },
          { value: "plan", label: "Plans" },
        ]}
      />
      <div className={styles.field}>
        <label htmlFor="filter-from">From</label>
        <input
          id="filter-from"
          name="from"
          type="date"
          defaultValue={filters.from ?? ""}
          aria-describedby="filter-days-zone"
        />
      </div>
      <div className={styles.field}>
        <label htmlFor="filter-to">To</label>
        <input
          id="filter-to"
          name="to"
          type="date"
          defaultValue={filters.to ?? ""}
          aria-describedby="filter-days-zone"
        />
      </div>
      <p id="filter-days-zone" className={styles.daysNote} data-testid="filter-days-zone">
        From and To are days in {timeZone}.
      </p>
      <div className={styles.formActions}>
        <button type="submit" className={styles.primary}>
          Apply filters
        </button>
        {filtered && (
          <Link href="/history" className={styles.clear}>
            Clear
          </Link>
        )}
      </div>
    </form>
  );
}
