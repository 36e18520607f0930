import { asc, gt, max } from "drizzle-orm";
import { getDb } from "@/db/client";
import { events, type EventRow } from "@/db/schema";
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";

// One tailer per process follows the event log and fans new rows out to local subscribers
// (streams, long-polls). It reads when a local write wakes it and otherwise every `pollMs`, which
// is how a process sees events written by another process over the same database.
//
// It follows the log only while someone listens: with no stream or long-poll open it forgets its
// place and polls nothing (an idle instance costs the database no reads), and the first
// subscriber has it read where the log ends now. Events written meanwhile were for nobody here.
export type EventListener = (rows: EventRow[]) => void;

const PAGE = 500;

class EventTailer {
  private lastSeq: number | null = null;
  private readonly listeners = new Set<EventListener>();
  private reading = false;
  private readAgain = false;
  private timer: NodeJS.Timeout | null = null;
  /** the start of following (the log's end read), shared by concurrent first subscribers */
  private starting: Promise<void> | null = null;
  /** grows each time the tailer stops, so a read begun before cannot move the new position */
  private epoch = 0;

  constructor(private readonly pollMs: number) {}

  /**
   * The highest `seq` this tailer has dispatched (events up to it reached every listener). Only
   * meaningful to a subscriber: without one the tailer does not follow the log.
   */
  async position(): Promise<number> {
    await this.ensureStarted();
    return this.lastSeq!;
  }

  async subscribe(listener: EventListener): Promise<() => void> {
    // Added before the start's read, so that no other subscriber's leaving stops the tailer
    // under it; it hears nothing until the position is known.
    this.listeners.add(listener);
    const unsubscribe = () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0) this.rest();
    };
    try {
      await this.ensureStarted();
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  /** How many subscribers follow the log (streams and long-polls of this process). */
  subscribers(): number {
    return this.listeners.size;
  }

  wake(): void {
    if (this.lastSeq === null) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    void this.read();
  }

  /**
   * Events this process just committed. When they are the very next rows of the log they are
   * dispatched as they are; otherwise (another process wrote in between, or a read is under
   * way) the log is read as after any wake-up, so order and completeness never rest on this.
   */
  offer(rows: EventRow[]): void {
    if (rows.length === 0 || this.lastSeq === null) return;
    const next =
      rows[0]!.seq === this.lastSeq + 1 && rows.every((r, i) => r.seq === rows[0]!.seq + i);
    if (this.reading || !next) return this.wake();
    this.lastSeq = rows[rows.length - 1]!.seq;
    this.dispatch(rows);
  }

  /** Stops following the log (the last subscriber left): no timer, no position. */
  private rest(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.lastSeq = null;
    this.starting = null;
    this.readAgain = false;
    this.epoch++;
  }

  private ensureStarted(): Promise<void> {
    if (this.lastSeq !== null) return Promise.resolve();
    if (this.starting) return this.starting;
    const epoch = this.epoch;
    const starting = (async () => {
      const [row] = await getDb()
        .select({ last: max(events.seq) })
        .from(events);
      if (epoch !== this.epoch) return; // everyone left meanwhile
      this.lastSeq = row?.last ?? 0;
      this.timer = setInterval(() => this.wake(), this.pollMs);
      this.timer.unref();
    })();
    this.starting = starting;
    // a failed start is tried again by the next subscriber
    starting.catch(() => {
      if (this.starting === starting) this.starting = null;
    });
    return starting;
  }

  private async read(): Promise<void> {
    this.reading = true;
    const epoch = this.epoch;
    try {
      do {
        this.readAgain = false;
        let rows: EventRow[];
        do {
          if (this.lastSeq === null) return;
          rows = await getDb()
            .select()
            .from(events)
            .where(gt(events.seq, this.lastSeq))
            .orderBy(asc(events.seq))
            .limit(PAGE);
          // The tailer stopped (and perhaps started again elsewhere in the log) during the read.
          if (epoch !== this.epoch || rows.length === 0) break;
          this.lastSeq = rows[rows.length - 1]!.seq;
          this.dispatch(rows);
        } while (rows.length === PAGE);
      } while (this.readAgain && epoch === this.epoch);
    } catch (error) {
      log().error({ err: error }, "Reading the event log failed; retrying on the next poll");
    } finally {
      this.reading = false;
    }
    // a wake-up that came for the tailer started again while an older read finished
    if (epoch !== this.epoch && this.readAgain) this.wake();
  }

  private dispatch(rows: EventRow[]): void {
    for (const listener of this.listeners) {
      try {
        listener(rows);
      } catch (error) {
        log().error({ err: error }, "An event listener failed");
      }
    }
  }
}

const globalTailer = globalThis as unknown as { __countersignTailer?: EventTailer };

export function getTailer(): EventTailer {
  globalTailer.__countersignTailer ??= new EventTailer(setting("EVENT_POLL_MS"));
  return globalTailer.__countersignTailer;
}

export function wakeTailer(): void {
  globalTailer.__countersignTailer?.wake();
}

/** Events this process committed, for its streams (EventTailer.offer). */
export function offerEvents(rows: EventRow[]): void {
  globalTailer.__countersignTailer?.offer(rows);
}

export type EventWatch = {
  /** Resolves once a matching event has arrived since the last call (or at once if one did), or after `timeoutMs`. */
  next(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
};

/** Watches the log for events matching `test`; events that arrive between `next` calls are kept. */
export async function watchEvents(test: (row: EventRow) => boolean): Promise<EventWatch> {
  let seen = false;
  let wakeUp: (() => void) | null = null;
  const unsubscribe = await getTailer().subscribe((rows) => {
    if (!rows.some(test)) return;
    seen = true;
    wakeUp?.();
  });
  return {
    next(timeoutMs, signal) {
      if (seen) {
        seen = false;
        return Promise.resolve(true);
      }
      return new Promise<boolean>((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", finish);
          wakeUp = null;
          const arrived = seen;
          seen = false;
          resolve(arrived);
        };
        const timer = setTimeout(finish, timeoutMs);
        signal?.addEventListener("abort", finish);
        wakeUp = finish;
      });
    },
    close: unsubscribe,
  };
}
