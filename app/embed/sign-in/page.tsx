import type { Metadata } from "next";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { SignInForm } from "@/app/(auth)/sign-in/sign-in-form";
import styles from "@/app/(auth)/auth.module.css";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { sessionUser } from "@/lib/auth/better-auth";
import { safeNextPath } from "@/lib/http/safe-next";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in · Countersign" };

/**
 * Sign-in inside the embed frame. /sign-in itself may be framed by nobody; this one only by the
 * embed's hosts (proxy.ts), like the card it leads back to.
 */
export default async function EmbedSignInPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string | string[] }>;
}) {
  const next = safeNextPath((await searchParams).next, publicBaseUrl());
  if (await sessionUser(await headers())) redirect(next);
  return (
    <div className={styles.panel}>
      <p className={styles.brand}>Countersign</p>
      <h1>Sign in</h1>
      <p className={styles.lead}>Sign in to review this request.</p>
      <SignInForm next={next} />
    </div>
  );
}
