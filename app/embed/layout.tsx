import type { Metadata } from "next";
import type { ReactNode } from "react";
import { Providers } from "@/components/providers";
import styles from "./embed.module.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { robots: { index: false, follow: false } };

/** The embed route's frame: no header, no navigation; another product's page is around it. */
export default function EmbedLayout({ children }: { children: ReactNode }) {
  return (
    <Providers>
      <main className={styles.embed}>{children}</main>
    </Providers>
  );
}
