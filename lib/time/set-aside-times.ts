import { localDate, startOfLocalTime } from "./local-day";

// When a card set aside ("Not now") comes back to the reviewer who set it aside: at the time
// they chose, or earlier, as soon as the card enters the last fifth of its time — the moment
// the deadline notifications call "deadline approaching" (lib/notifications/plan-notifications.ts)
// — so a card set aside "until tomorrow" cannot sleep through its own deadline.

export const SET_ASIDE_CHOICES = ["15m", "1h", "tomorrow"] as const;
export type SetAsideChoice = (typeof SET_ASIDE_CHOICES)[number];

/** "Until tomorrow morning": this time of the next calendar day, in the reviewer's zone. */
export const MORNING = "09:00";

const MINUTE = 60_000;

/** The moment a card set aside at `now` for `choice` is due back, before the deadline rule. */
export function setAsideUntil(choice: SetAsideChoice, now: number, timeZone: string): number {
  switch (choice) {
    case "15m":
      return now + 15 * MINUTE;
    case "1h":
      return now + 60 * MINUTE;
    case "tomorrow": {
      const today = localDate(now, timeZone);
      const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000)
        .toISOString()
        .slice(0, 10);
      return startOfLocalTime(tomorrow, MORNING, timeZone);
    }
  }
}

/** When the last fifth of a card's time begins: expiresAt − 0.2 × (expiresAt − createdAt). */
export function lastFifthBegins(batch: { createdAt: number; expiresAt: number }): number {
  return batch.expiresAt - Math.floor((batch.expiresAt - batch.createdAt) / 5);
}

/** When a card set aside until `until` is back: then, or when its last fifth begins if sooner. */
export function returnsAt(until: number, batch: { createdAt: number; expiresAt: number }): number {
  return Math.min(until, lastFifthBegins(batch));
}
