import Link from "next/link";
import type { ReactNode } from "react";
import { NavLinks } from "@/components/app-shell/nav-links";
import { ShellMenu } from "@/components/app-shell/shell-menu";
import { SignOutButton } from "@/components/app-shell/sign-out-button";
import { ThemeToggle } from "@/components/app-shell/theme-toggle";
import { Providers } from "@/components/providers";
import { TimeZoneProvider } from "@/components/time/time-zone-provider";
import { getDb } from "@/db/client";
import { viewerRole } from "@/lib/queues/viewer-role";
import { currentReviewer, currentTimeZone } from "./current-reviewer";

export const dynamic = "force-dynamic";

export default async function ReviewerLayout({ children }: { children: ReactNode }) {
  const reviewer = await currentReviewer();
  const [zone, role] = await Promise.all([currentTimeZone(), viewerRole(getDb(), reviewer.id)]);
  return (
    <Providers>
      <TimeZoneProvider
        timeZone={zone.timeZone}
        source={zone.source}
        browserReported={zone.browserReported}
      >
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="shell-header">
          <Link href="/queue" className="shell-brand">
            Countersign
          </Link>
          <ShellMenu>
            <NavLinks role={role} />
            <div className="shell-tools">
              {/* Their name leads to their own settings (the time zone): one link fewer in the nav. */}
              <Link
                href="/settings"
                className="shell-user"
                title="Your settings"
                data-testid="signed-in-as"
              >
                {reviewer.name}
              </Link>
              <ThemeToggle />
              <SignOutButton />
            </div>
          </ShellMenu>
        </header>
        <main id="main" className="shell-main">
          {children}
        </main>
      </TimeZoneProvider>
    </Providers>
  );
}
