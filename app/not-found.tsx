import Link from "next/link";

export default function NotFound() {
  return (
    <main style={{ maxWidth: 560, margin: "5rem auto", padding: "0 1.5rem", textAlign: "center" }}>
      <h1>Not found</h1>
      <p>
        There is nothing here, or it belongs to a queue you are not a member of. Ask a lead of that
        queue to add you.
      </p>
      <p>
        <Link href="/queue">Back to your queue</Link>
      </p>
    </main>
  );
}
