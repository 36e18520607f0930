import type { Metadata } from "next";
import { headers } from "next/headers";
import type { ReactNode } from "react";
import { THEME_BOOT_SCRIPT } from "@/components/app-shell/theme";
import "./globals.css";

export const metadata: Metadata = {
  title: "Countersign",
  description: "Where AI agents ask people for permission.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // The nonce proxy.ts put in this response's Content-Security-Policy. Reading it also renders
  // every page per request, which a nonce needs: a page prerendered at build time would carry
  // scripts without one, and the policy would block them.
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* A constant of ours, not user content: applies the saved theme before the first paint. */}
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: THEME_BOOT_SCRIPT }} />
      </head>
      <body>{children}</body>
    </html>
  );
}
