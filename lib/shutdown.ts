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
