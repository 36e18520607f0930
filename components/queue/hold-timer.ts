// A single-key approval is held back before it is sent, so a slip of the hand can be undone with
// nothing written (issue 18, item 4). Pure: the clock and the timers are passed in, so the
// boundaries are tested without a browser.

export const HOLD_MS = 5_000;

export type Held<T> = { item: T; dueAt: number };

export type HoldTimer<T> = {
  /** holds `item` for `delayMs`; a different item already held is sent at once first */
  hold(item: T): void;
  /** the held item is dropped unsent; returns it (null when nothing was held) */
  cancel(): T | null;
  /** the held item is sent now; returns it (null when nothing was held) */
  flush(): T | null;
  current(): Held<T> | null;
  /** whole seconds until the held item is sent (rounded up; 0 when nothing is held) */
  secondsLeft(): number;
};

export function createHoldTimer<T>(options: {
  delayMs?: number;
  /** sends the item; called exactly once per held item that is not cancelled */
  send: (item: T) => void;
  /** the same item (say, the same call) is not held twice: a second press does nothing */
  same?: (a: T, b: T) => boolean;
  now?: () => number;
  setTimer?: (run: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}): HoldTimer<T> {
  const delayMs = options.delayMs ?? HOLD_MS;
  const now = options.now ?? Date.now;
  const setTimer = options.setTimer ?? ((run, ms) => setTimeout(run, ms));
  const clearTimer =
    options.clearTimer ?? ((handle) => clearTimeout(handle as ReturnType<typeof setTimeout>));
  let held: Held<T> | null = null;
  let timer: unknown = null;

  function take(): T | null {
    if (!held) return null;
    const { item } = held;
    held = null;
    if (timer !== null) clearTimer(timer);
    timer = null;
    return item;
  }

  function flush(): T | null {
    const item = take();
    if (item !== null) options.send(item);
    return item;
  }

  return {
    hold(item) {
      if (held && options.same?.(held.item, item)) return;
      flush();
      held = { item, dueAt: now() + delayMs };
      timer = setTimer(flush, delayMs);
    },
    cancel: take,
    flush,
    current: () => held,
    secondsLeft: () => (held ? Math.max(0, Math.ceil((held.dueAt - now()) / 1000)) : 0),
  };
}
