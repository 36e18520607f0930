import Link from "next/link";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import type { WireEvent } from "@/lib/events/wire";
import { describeEvent, timelineContext } from "./describe-event";
import { plural, previewJson } from "./format";
import { Icon } from "./icons";
import { Time } from "@/components/time/time";
import { APP_LOCALE } from "@/lib/time/constants";
import styles from "./run-timeline.module.css";

function Title({ title, code }: { title: string; code?: string }) {
  const [before, after] = title.split("{code}");
  if (after === undefined) return <>{title}</>;
  return (
    <>
      {before}
      {code ? <code className={styles.tool}>{code}</code> : "a call"}
      {after}
    </>
  );
}

function Actor({ actor }: { actor: WireEvent["actor"] }) {
  const name = actor.name ?? (actor.kind === "system" ? "Countersign" : "unknown");
  return (
    <span className={styles.actor}>
      {name}
      {actor.kind !== "reviewer" && (
        <span className={styles.actorKind}>{actor.kind === "agent" ? "agent" : "system"}</span>
      )}
    </span>
  );
}

/** The run's events, oldest first, as a vertical timeline. */
export function Timeline({
  runId,
  events,
  batches,
  now,
  timeZone,
  cursor,
  nextCursor,
}: {
  runId: string;
  events: WireEvent[];
  batches: BatchView[];
  now: number;
  /** the viewer's zone, for the times inside event notes */
  timeZone: string;
  /** the page shows the events after this seq */
  cursor: string | null;
  nextCursor: string | null;
}) {
  const context = timelineContext(batches, { timeZone, locale: APP_LOCALE });
  return (
    <section className={styles.section} aria-labelledby="timeline-heading">
      <div className={styles.sectionHeader}>
        <h2 id="timeline-heading" className={styles.sectionTitle}>
          Timeline
        </h2>
        <span className={styles.count}>{plural(events.length, "event")}</span>
      </div>
      {cursor && (
        <p className={styles.pageNote}>
          Showing the events after #{cursor}. <Link href={`/runs/${runId}`}>Back to the start</Link>
        </p>
      )}
      {events.length === 0 ? (
        <p className={styles.empty}>Nothing has happened in this run that you can see yet.</p>
      ) : (
        <ol className={styles.timeline} aria-label="Run events, oldest first">
          {events.map((event) => {
            const description = describeEvent(event, context);
            return (
              <li
                key={event.seq}
                className={styles.event}
                data-testid="timeline-event"
                data-event-type={event.type}
              >
                <span className={`${styles.marker} ${styles[description.tone]}`}>
                  <Icon name={description.icon} />
                </span>
                <div className={styles.eventBody}>
                  <p className={styles.eventTitle}>
                    <Title title={description.title} code={description.code} />
                  </p>
                  {description.note && <p className={styles.eventNote}>{description.note}</p>}
                  {description.reason && <p className={styles.eventReason}>{description.reason}</p>}
                  <p className={styles.eventMeta}>
                    <Actor actor={event.actor} />
                    <Time iso={event.at} now={now} variant="inline" />
                  </p>
                  {description.payload && (
                    <details className={styles.payload}>
                      <summary>{description.payload.label}</summary>
                      <pre>{previewJson(description.payload.value)}</pre>
                    </details>
                  )}
                </div>
              </li>
            );
          })}
        </ol>
      )}
      {nextCursor && (
        <p className={styles.pageNote}>
          This page shows at most {plural(events.length, "event")}.{" "}
          <Link href={`/runs/${runId}?cursor=${nextCursor}`}>Show later events</Link>
        </p>
      )}
    </section>
  );
}
