import Link from "next/link";

export default function Home() {
  return (
    <main style={{ maxWidth: 720, margin: "4rem auto", padding: "0 1.5rem" }}>
      <h1>Countersign</h1>
      <p>
        Where AI agents ask people for permission. An agent about to take a risky action pauses and
        hands the pending tool calls to Countersign; reviewers approve, reject or edit them; the
        agent resumes exactly once.
      </p>
      <h2>For agents</h2>
      <p>
        The HTTP API lives under <code>/api/v1</code>. Its contract is the{" "}
        <Link href="/api/v1/openapi.json">OpenAPI document</Link>. Authenticate with{" "}
        <code>Authorization: Bearer &lt;agent key&gt;</code>; create a key with{" "}
        <code>npm run admin -- agent create --name &quot;My agent&quot; --queue support</code>.
      </p>
      <h2>Health</h2>
      <p>
        <Link href="/api/health">/api/health</Link> answers <code>{`{"ok":true}`}</code> when the
        database does.
      </p>
    </main>
  );
}
