// Process shutdown, as a signal long-lived requests listen to. On SIGTERM/SIGINT Next.js stops
// once open requests finish, and a stream (or a long-poll) would hold it up: they end on this
// signal instead, and their clients resume elsewhere (streams with Last-Event-ID) missing nothing.

const globalShutdown = globalThis as unknown as { __countersignShutdown?: AbortController };

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
 * Calls `onEnd` once, when `signal` aborts or the server begins to stop; returns the function that
 * stops listening. (Not `AbortSignal.any`: on Node 20 every signal derived from the long-lived
 * shutdown signal stays reachable from it, a leak per request.)
 */
export function onRequestEnd(signal: AbortSignal | undefined, onEnd: () => void): () => void {
  const signals = [shutdownSignal(), ...(signal ? [signal] : [])];
  let called = false;
  const listener = () => {
    if (called) return;
    called = true;
    stop();
    onEnd();
  };
  const stop = () => signals.forEach((s) => s.removeEventListener("abort", listener));
  signals.forEach((s) => s.addEventListener("abort", listener));
  if (signals.some((s) => s.aborted)) listener();
  return stop;
}
