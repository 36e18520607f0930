import type { Metadata } from "next";
import { LinkPage } from "@/components/people/link-page";

export const dynamic = "force-dynamic";
export const metadata: Metadata = {
  title: "Reset your password · Countersign",
  referrer: "no-referrer",
};

/** A one-time link's page: public, the token is the authority (lib/people/person-links.ts). */
export default async function Page({ params }: { params: Promise<{ token: string }> }) {
  return <LinkPage token={(await params).token} kind="password_reset" />;
}
