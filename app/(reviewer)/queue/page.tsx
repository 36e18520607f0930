import { and, asc, eq, isNull } from "drizzle-orm";
import type { Metadata } from "next";
import { Suspense } from "react";
import { getDb } from "@/db/client";
import { queueMembers, queues } from "@/db/schema";
import { QueueScreen } from "@/components/queue/queue-screen";
import { FIRST_PAGE_SIZE } from "@/components/queue/queue-cache";
import { queueSnapshot } from "@/lib/batches/queue-snapshot";
import { emailConfigured } from "@/lib/email/transport";
import { getMySettings } from "@/lib/people/my-settings";
import { queueContacts, viewerRole } from "@/lib/queues/viewer-role";
import { currentReviewer } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Queue · Countersign" };

export default async function QueuePage() {
  const reviewer = await currentReviewer();
  const [settings, role, contacts, memberOf] = await Promise.all([
    getMySettings(reviewer),
    viewerRole(getDb(), reviewer.id),
    queueContacts(getDb(), reviewer.id),
    getDb()
      .select({ id: queues.id, name: queues.name })
      .from(queueMembers)
      .innerJoin(queues, eq(queues.id, queueMembers.queueId))
      .where(and(eq(queueMembers.userId, reviewer.id), isNull(queues.archivedAt)))
      .orderBy(asc(queues.name)),
  ]);
  return (
    // The filters read the URL on the client (useSearchParams), which needs a Suspense boundary.
    <Suspense>
      <QueueScreen
        viewer={{ id: reviewer.id, name: reviewer.name }}
        queues={memberOf}
        shortcutsEnabled={settings.shortcutsEnabled}
        welcome={{
          role,
          queueNames: memberOf.map((q) => q.name),
          contacts,
          emailConfigured: emailConfigured(),
        }}
        initial={await queueSnapshot(reviewer, { limit: FIRST_PAGE_SIZE })}
      />
    </Suspense>
  );
}
