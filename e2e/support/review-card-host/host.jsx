// A host application's page using @countersign/review-card as a host writes it: plain React,
// the package's built entry (resolved through node_modules like any dependency) and its
// stylesheet, served by e2e/review-card-host.spec.ts. The page's settings come from a JSON block:
// `batches` to show as they are (with a fixed clock), or `batchId` to follow live with useBatch
// through the host's own proxy (/countersign/api/v1/… → Countersign, token added server-side).
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ReviewCard, useBatch } from "@countersign/review-card";

const config = JSON.parse(document.getElementById("host-config").textContent);
const COUNTERSIGN = "/countersign";

/** The README's quick-start `decide`: POST through the proxy, the API's answer as the card's. */
async function decide(path, body) {
  const response = await fetch(`${COUNTERSIGN}/api/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (response.ok) return { ok: true, batch: answer.batch ?? answer };
  const { code, message, current } = answer.error;
  return { ok: false, code, message, current };
}

function LiveApproval({ batchId, viewer }) {
  const { batch, error, status } = useBatch(batchId, { baseUrl: COUNTERSIGN });
  return (
    <section aria-label="Approval">
      <p className="status" data-testid="live-status">
        {status}
      </p>
      {error && <p role="alert">{error.message}</p>}
      {batch && (
        <ReviewCard
          batch={batch}
          viewer={viewer}
          onDecide={({ callId, ...decision }) => decide(`/calls/${callId}/decision`, decision)}
          onDecideBatch={({ batchId: id, ...decision }) =>
            decide(`/batches/${id}/decision`, decision)
          }
        />
      )}
    </section>
  );
}

function StaticCards({ batches, viewer, now }) {
  const refuse = async () => ({ ok: false, code: "forbidden", message: "Demo page" });
  return batches.map((batch) => (
    <ReviewCard
      key={batch.id}
      batch={batch}
      viewer={viewer}
      onDecide={refuse}
      onDecideBatch={refuse}
      now={() => now}
    />
  ));
}

createRoot(document.getElementById("app")).render(
  <StrictMode>
    <main className="page">
      <h1>Acme support — approvals</h1>
      <p className="lead">Your assistant is waiting for these decisions.</p>
      {config.batchId ? (
        <LiveApproval batchId={config.batchId} viewer={config.viewer} />
      ) : (
        <StaticCards batches={config.batches} viewer={config.viewer} now={config.now} />
      )}
    </main>
  </StrictMode>,
);
