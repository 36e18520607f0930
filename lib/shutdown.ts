// Process shutdown, as a signal long-lived requests listen to. On SIGTERM/SIGINT Next.js stops
// once open requests finish, and a stream (or a long-poll) would hold it up: they end on this
// signal instead, and their clients resume elsewhere (streams with Last-Event-ID) missing nothing.

const globalShutdown = globalThis as unknown as {
  __countersignShutdown?: AbortController;
  __countersignOnShutdown?: Set<() => void>;
};

function controller(): AbortController {
  globalShutdown.__countersignShutdown ??= new AbortController();
  return globalShutdown.__countersignShutdown;
}

export function shutdownSignal(): AbortSignal {
  return controller().signal;
}

export function beginShutdown(): void {
  controller().abort();
}

/**
 * What to end on shutdown, behind one listener on the shutdown signal. (Not a listener per
 * request: an EventTarget walks its listeners on every add and remove, so with thousands of open
 * streams each new one cost a walk over all the others.)
 */
function endOnShutdown(): Set<() => void> {
  let callbacks = globalShutdown.__countersignOnShutdown;
  if (!callbacks) {
    const all = (callbacks = globalShutdown.__countersignOnShutdown = new Set());
    shutdownSignal().addEventListener("abort", () => [...all].forEach((end) => end()), {
      once: true,
    });
  }
  return callbacks;
}

/**
 * Calls `onEnd` once, when `signal` aborts or the server begins to stop; returns the function that
 * stops listening. (Not `AbortSignal.any`: on Node 20 every signal derived from the long-lived
 * shutdown signal stays reachable from it, a leak per request.)
 */
export function onRequestEnd(signal: AbortSignal | undefined, onEnd: () => void): () => void {
  const onShutdown = endOnShutdown();
  let called = false;
  const listener = () => {
    if (called) return;
    called = true;
    stop();
    onEnd();
  };
  const stop = () => {
    onShutdown.delete(listener);
    signal?.removeEventListener("abort", listener);
  };
  onShutdown.add(listener);
  signal?.addEventListener("abort", listener);
  if (shutdownSignal().aborted || signal?.aborted) listener();
  return stop;
}
