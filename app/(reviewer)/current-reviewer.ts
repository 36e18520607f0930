import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import type { ReviewerActor } from "@/lib/auth/actor";
import { sessionUser } from "@/lib/auth/better-auth";
import { UnauthenticatedError } from "@/lib/errors";
import {
  TIME_ZONE_COOKIE,
  viewerTimeZone,
  type ViewerTimeZoneWithReport,
} from "@/lib/people/viewer-time-zone";

/** The signed-in reviewer of a page, or off to sign in. */
export async function currentReviewer(): Promise<ReviewerActor> {
  const reviewer = await sessionReviewer();
  if (!reviewer) redirect("/sign-in");
  return reviewer;
}

/** The signed-in reviewer of a server action, or null (the action answers `unauthenticated`). */
export async function sessionReviewer(): Promise<ReviewerActor | null> {
  const user = await sessionUser(await headers());
  return user ? { kind: "reviewer", id: user.id, name: user.name, email: user.email } : null;
}

/** The signed-in reviewer of a server action; else `unauthenticated`, which the action answers. */
export async function actionReviewer(): Promise<ReviewerActor> {
  const reviewer = await sessionReviewer();
  if (!reviewer) throw new UnauthenticatedError("Your session ended. Sign in again.");
  return reviewer;
}

/**
 * The zone the signed-in reviewer's page shows times in (lib/time/zone.ts), read once per
 * request however many server components ask.
 */
export const currentTimeZone = cache(async (): Promise<ViewerTimeZoneWithReport> => {
  const reviewer = await currentReviewer();
  return viewerTimeZone(reviewer.id, (await cookies()).get(TIME_ZONE_COOKIE)?.value);
});
