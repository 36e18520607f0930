import type { Metadata } from "next";
import Link from "next/link";
import credentials from "@/components/credentials/credentials.module.css";
import styles from "@/components/queue-settings/queue-settings.module.css";
import historyStyles from "@/components/history/history.module.css";
import { describeTrustEvent } from "@/lib/audit/describe-event";
import { listAuditEvents } from "@/lib/audit/list-audit";
import { ForbiddenError } from "@/lib/errors";
import { Time } from "@/components/time/time";
import { currentReviewer } from "../current-reviewer";
import { ScrollBox } from "@/components/app-shell/scroll-box";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit · Countersign" };

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<{ before?: string | string[] }>;
}) {
  const reviewer = await currentReviewer();
  const { before } = await searchParams;
  const renderedAt = renderTime();
  const header = (admin: boolean) => (
    <header className={styles.header}>
      <div>
        <h1 className={styles.title}>Audit</h1>
        <p className={styles.lead}>
          Who changed who may do what: agent keys, personal tokens, sessions, people and queue
          memberships, newest first.
        </p>
      </div>
      {admin && (
        // Each file ends with the event log's chain head, signed: `npm run admin -- audit verify-export`.
        <div className={historyStyles.exports}>
          {(["csv", "json"] as const).map((format) => (
            <a
              key={format}
              href={`/api/v1/audit/export?format=${format}`}
              className={historyStyles.exportLink}
              download
            >
              Export {format.toUpperCase()}
            </a>
          ))}
        </div>
      )}
    </header>
  );
  let page;
  try {
    page = await listAuditEvents(reviewer, typeof before === "string" ? { before } : {});
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return (
      <>
        {header(false)}
        <p className={styles.lead}>Only an admin sees the audit log.</p>
      </>
    );
  }
  return (
    <>
      {header(true)}
      {page.events.length === 0 ? (
        <div className={styles.empty}>
          <p className={styles.emptyTitle}>Nothing here</p>
          <p className={styles.emptyText}>No trust changes {before ? "before these" : "yet"}.</p>
        </div>
      ) : (
        <ScrollBox label="Trust changes" className={styles.tableWrap}>
          <table className={styles.table}>
            <caption className="visually-hidden">Trust changes, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">Event</th>
              </tr>
            </thead>
            <tbody>
              {page.events.map((event) => (
                <tr key={event.seq} data-testid="audit-row">
                  <td className={credentials.nowrap}>
                    <Time iso={event.at} now={renderedAt} variant="exact" />
                  </td>
                  <td>{event.actor.name ?? event.actor.kind}</td>
                  <td>{describeTrustEvent(event)}</td>
                  <td>
                    <code className={credentials.prefix}>{event.type}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      <nav className={credentials.pager} aria-label="Audit pages">
        {before && <Link href="/audit">Newest</Link>}
        {page.nextCursor && <Link href={`/audit?before=${page.nextCursor}`}>Older</Link>}
      </nav>
    </>
  );
}

/** The clock every relative time on the page is measured from, read once per request. */
function renderTime(): number {
  return Date.now();
}
