import type { Metadata } from "next";
import styles from "@/components/queue-settings/queue-settings.module.css";
import { ShortcutsForm } from "@/components/settings/shortcuts-form";
import { TimeZoneForm } from "@/components/settings/time-zone-form";
import { getMySettings } from "@/lib/people/my-settings";
import { DEFAULT_TIME_ZONE } from "@/lib/time/zone";
import { currentReviewer, currentTimeZone } from "../current-reviewer";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Settings · Countersign" };

/** Every zone this server can show times in, UTC first (Node's list leaves it out). */
function zoneChoices(): string[] {
  const zones = Intl.supportedValuesOf("timeZone").filter((zone) => zone !== DEFAULT_TIME_ZONE);
  return [DEFAULT_TIME_ZONE, ...zones];
}

export default async function SettingsPage() {
  const reviewer = await currentReviewer();
  const [settings, zone] = await Promise.all([getMySettings(reviewer), currentTimeZone()]);
  return (
    <>
      <header className={styles.header}>
        <div>
          <h1 className={styles.title}>Settings</h1>
          <p className={styles.lead}>
            Yours alone: how Countersign shows you times and which keys act.
          </p>
        </div>
      </header>
      <TimeZoneForm
        chosen={settings.timeZone}
        browserZone={zone.source === "person" ? zone.browserReported : zone.timeZone}
        zones={zoneChoices()}
        renderedAt={renderTime()}
      />
      <ShortcutsForm enabled={settings.shortcutsEnabled} />
    </>
  );
}

/** The clock the preview is measured from, read once per request. */
function renderTime(): number {
  return Date.now();
}
