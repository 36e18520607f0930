import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { hasAnyUser } from "@/lib/admin/create-first-admin";
import styles from "../auth.module.css";
import { SetupForm } from "./setup-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Set up · Countersign" };

export default async function SetupPage() {
  if (await hasAnyUser()) redirect("/sign-in");
  return (
    <main className={styles.page}>
      <div className={styles.panel}>
        <p className={styles.brand}>Countersign</p>
        <h1>Create the first admin</h1>
        <p className={styles.lead}>
          This database has no accounts yet. The first one becomes an admin of every queue (a
          &ldquo;General&rdquo; queue is created for you). To prove you run this server, enter the
          one-time setup code it printed when it started.
        </p>
        <SetupForm />
      </div>
    </main>
  );
}
