import type { ReactNode } from "react";
import type { Insights, Outcomes } from "@/lib/insights/read-insights";
import { FatigueTable } from "./fatigue-table";
import { ActivityChart, OutcomeChart, WaitChart } from "./insights-charts";
import styles from "./insights.module.css";

// The insights page's body: each chart has its table of numbers beside it (the table is what a
// screen reader reads; the chart is a picture of it). Days and times are the viewer's (their time
// zone, as on the history page).

const SOURCE_LABELS = {
  reviewer: "Reviewers",
  policy: "Policy rules",
  memory: "Remembered approvals",
  timeout: "Deadline (onTimeout)",
} as const;

export function formatWait(ms: number | null): string {
  if (ms === null) return "—";
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const m = s / 60;
  if (m < 60) return `${m < 10 ? m.toFixed(1) : Math.round(m)} min`;
  const h = m / 60;
  if (h < 48) return `${h.toFixed(1)} h`;
  return `${(h / 24).toFixed(1)} d`;
}

const rate = (o: Outcomes) => {
  const total = o.approved + o.rejected;
  return total === 0 ? "—" : `${Math.round((o.approved / total) * 100)} %`;
};

/** "2026-03-08" or "2026-03-08 14:00": the time `ms` in `timeZone`, as a bar's label. */
export function localLabel(ms: number, hours: boolean, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      ...(hours && { hour: "2-digit", minute: "2-digit", hourCycle: "h23" as const }),
    })
      .formatToParts(ms)
      .map((part) => [part.type, part.value]),
  );
  const day = `${parts.year}-${parts.month}-${parts.day}`;
  return hours ? `${day} ${parts.hour}:${parts.minute}` : day;
}

function Section({
  title,
  lead,
  chart,
  table,
  testId,
}: {
  title: string;
  lead: string;
  chart: ReactNode;
  table: ReactNode;
  testId: string;
}) {
  return (
    <section className={styles.section} aria-labelledby={`${testId}-title`} data-testid={testId}>
      <h2 id={`${testId}-title`} className={styles.sectionTitle}>
        {title}
      </h2>
      <p className={styles.sectionLead}>{lead}</p>
      <div className={styles.pair}>
        <div className={styles.chart}>{chart}</div>
        {/* scrolls when long (an hourly or daily period): focusable, so a keyboard can scroll it */}
        <div
          className={styles.tableWrap}
          tabIndex={0}
          role="region"
          aria-label={`${title}: the numbers`}
        >
          {table}
        </div>
      </div>
    </section>
  );
}

function OutcomeTable({
  caption,
  first,
  rows,
}: {
  caption: string;
  first: string;
  rows: ({ label: string } & Outcomes)[];
}) {
  return (
    <table className={styles.table}>
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{first}</th>
          <th scope="col">Approved</th>
          <th scope="col">Rejected</th>
          <th scope="col">% approved</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.label}>
            <th scope="row">{row.label}</th>
            <td>{row.approved}</td>
            <td>{row.rejected}</td>
            <td>{rate(row)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function OutcomeSection(props: {
  title: string;
  lead: string;
  first: string;
  rows: ({ label: string } & Outcomes)[];
  testId: string;
}) {
  if (props.rows.length === 0) {
    return (
      <section className={styles.section} data-testid={props.testId}>
        <h2 className={styles.sectionTitle}>{props.title}</h2>
        <p className={styles.none}>None in this period.</p>
      </section>
    );
  }
  return (
    <Section
      title={props.title}
      lead={props.lead}
      testId={props.testId}
      chart={<OutcomeChart bars={props.rows} />}
      table={<OutcomeTable caption={props.title} first={props.first} rows={props.rows} />}
    />
  );
}

export function InsightsView({
  insights,
  queueHref,
  timeZone,
}: {
  insights: Insights;
  /** the viewer's zone: the bars are its calendar days */
  timeZone: string;
  /** the page for one queue, over the same period */
  queueHref: (queueId: string) => string;
}) {
  const { totals, timeToDecision: wait, period } = insights;
  const hourly = period.bucketMs < 86_400_000;
  const settled = totals.decided + totals.expired + totals.cancelled;
  if (totals.created === 0 && settled === 0) {
    return (
      <div className={styles.empty} data-testid="insights-empty">
        <p className={styles.emptyTitle}>No cards in this period</p>
        <p className={styles.emptyText}>
          Nothing was asked of {insights.queueId ? "this queue" : "your queues"} between{" "}
          {localLabel(period.from, true, timeZone)} and {localLabel(period.to, true, timeZone)} (
          {timeZone}). Once agents send cards, how long they wait and who decides them shows here.
        </p>
      </div>
    );
  }
  const bars = insights.series.map((bar) => ({
    ...bar,
    label: localLabel(bar.start, hourly, timeZone),
  }));
  const waits = [
    { label: "p50", ms: wait.p50Ms },
    { label: "p90", ms: wait.p90Ms },
    { label: "p99", ms: wait.p99Ms },
  ];
  // the chart's unit fits its longest bar: seconds, minutes or hours
  const waitUnit =
    (wait.p99Ms ?? 0) < 120_000
      ? ({ name: "s", ms: 1000 } as const)
      : (wait.p99Ms ?? 0) < 120 * 60_000
        ? ({ name: "min", ms: 60_000 } as const)
        : ({ name: "h", ms: 3_600_000 } as const);
  return (
    <>
      <dl className={styles.stats} data-testid="insights-totals">
        <Stat label="Cards created" value={totals.created} />
        <Stat
          label="Cards settled"
          value={settled}
          sub={`${totals.decided} decided · ${totals.cancelled} withdrawn`}
        />
        <Stat
          label="Time to decision, p50"
          value={formatWait(wait.p50Ms)}
          sub={`over ${wait.count} cards`}
        />
        <Stat label="p90 · p99" value={`${formatWait(wait.p90Ms)} · ${formatWait(wait.p99Ms)}`} />
        <Stat label="Deadlines missed" value={totals.expired} sub="expired with no decision" />
        <Stat
          label="Escalated cards"
          value={totals.escalatedCards}
          sub={`${totals.escalations} escalation${totals.escalations === 1 ? "" : "s"}`}
        />
      </dl>

      <Section
        title="Activity"
        testId="insights-activity"
        lead={`Cards created and settled per ${hourly ? "hour" : period.bucketMs === 86_400_000 ? "day" : "week"} (${timeZone}).`}
        chart={<ActivityChart bars={bars} />}
        table={
          <table className={styles.table}>
            <caption className="visually-hidden">Cards created and settled</caption>
            <thead>
              <tr>
                <th scope="col">
                  {hourly ? "Hour" : period.bucketMs === 86_400_000 ? "Day" : "Week from"}
                </th>
                <th scope="col">Created</th>
                <th scope="col">Settled</th>
              </tr>
            </thead>
            <tbody>
              {bars.map((bar) => (
                <tr key={bar.start}>
                  <th scope="row">{bar.label}</th>
                  <td>{bar.created}</td>
                  <td>{bar.settled}</td>
                </tr>
              ))}
            </tbody>
          </table>
        }
      />

      <Section
        title="Time to decision"
        testId="insights-wait"
        lead="From a card's arrival to its settling, over the cards that waited (those a policy or a remembered approval settled on arrival are left out)."
        chart={
          <WaitChart
            unit={waitUnit.name}
            bars={waits.map((w) => ({ label: w.label, value: (w.ms ?? 0) / waitUnit.ms }))}
          />
        }
        table={
          <table className={styles.table}>
            <caption className="visually-hidden">Time to decision percentiles</caption>
            <thead>
              <tr>
                <th scope="col">Percentile</th>
                <th scope="col">Wait</th>
              </tr>
            </thead>
            <tbody>
              {waits.map((w) => (
                <tr key={w.label}>
                  <th scope="row">{w.label}</th>
                  <td>{formatWait(w.ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        }
      />

      <OutcomeSection
        title="Decisions by source"
        testId="insights-sources"
        lead="Who or what decided the calls of the cards settled in the period."
        first="Source"
        rows={insights.bySource.map((s) => ({ label: SOURCE_LABELS[s.source], ...s }))}
      />
      <OutcomeSection
        title="By tool"
        testId="insights-tools"
        lead="Approval and rejection of each tool's calls, busiest first."
        first="Tool"
        rows={insights.byTool.map((t) => ({ label: t.tool, ...t }))}
      />
      <OutcomeSection
        title="By agent"
        testId="insights-agents"
        lead="Approval and rejection of each agent's calls, busiest first."
        first="Agent"
        rows={insights.byAgent.map((a) => ({ label: a.name, ...a }))}
      />
      <OutcomeSection
        title="Reviewers' load"
        testId="insights-reviewers"
        lead="Votes each reviewer cast on the period's cards (with a quorum, a call takes several)."
        first="Reviewer"
        rows={insights.reviewers.map((r) => ({ label: r.name, ...r }))}
      />

      <FatigueSection fatigue={insights.fatigue} />

      {insights.queueId === null && insights.perQueue.length > 1 && (
        <section className={styles.section} data-testid="insights-queues">
          <h2 className={styles.sectionTitle}>Per queue</h2>
          <div className={styles.tableWrap} tabIndex={0} role="region" aria-label="Cards per queue">
            <table className={styles.table}>
              <caption className="visually-hidden">Cards per queue</caption>
              <thead>
                <tr>
                  <th scope="col">Queue</th>
                  <th scope="col">Created</th>
                  <th scope="col">Decided</th>
                  <th scope="col">Deadlines missed</th>
                  <th scope="col">Withdrawn</th>
                  <th scope="col">Escalated</th>
                </tr>
              </thead>
              <tbody>
                {insights.perQueue.map((q) => (
                  <tr key={q.id}>
                    <th scope="row">
                      <a href={queueHref(q.id)}>{q.name}</a>
                    </th>
                    <td>{q.created}</td>
                    <td>{q.decided}</td>
                    <td>{q.expired}</td>
                    <td>{q.cancelled}</td>
                    <td>{q.escalatedCards}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </>
  );
}

function FatigueSection({ fatigue }: { fatigue: Insights["fatigue"] }) {
  const seconds = fatigue.quickMs / 1000;
  return (
    <section
      className={styles.section}
      aria-labelledby="insights-fatigue-title"
      data-testid="insights-fatigue"
    >
      <h2 id="insights-fatigue-title" className={styles.sectionTitle}>
        Approval fatigue
      </h2>
      <p className={styles.sectionLead}>
        How many of each person&apos;s approvals came less than {seconds} s after the card appeared
        (its arrival, or its escalation into the queue), and how often they approve. Only
        people&apos;s votes count (with a quorum, each one&apos;s own); policy rules, remembered
        approvals and deadlines are left out. Many quick approvals of one tool may mean it is safe
        to allow by a policy; many from one person may mean the cards are no longer read.
      </p>
      {fatigue.byReviewer.length === 0 ? (
        <p className={styles.none}>No votes in this period.</p>
      ) : (
        // Six columns each: one table under the other, at full width.
        <>
          <h3 className={styles.subTitle}>By reviewer</h3>
          <FatigueTable
            caption="Approval fatigue by reviewer"
            first="Reviewer"
            quickSeconds={seconds}
            testId="fatigue-reviewers"
            rows={fatigue.byReviewer.map((r) => ({ key: r.id, label: r.name, ...r }))}
          />
          <h3 className={styles.subTitle}>By tool</h3>
          <FatigueTable
            caption="Approval fatigue by tool"
            first="Tool"
            quickSeconds={seconds}
            testId="fatigue-tools"
            rows={fatigue.byTool.map((t) => ({ key: t.tool, label: t.tool, ...t }))}
          />
        </>
      )}
    </section>
  );
}

function Stat({ label, value, sub }: { label: string; value: ReactNode; sub?: string }) {
  return (
    <div className={styles.stat}>
      <dt>{label}</dt>
      <dd>
        {value}
        {sub && <span className={styles.sub}>{sub}</span>}
      </dd>
    </div>
  );
}
