"use client";

import { useState, type ReactNode } from "react";
import styles from "./filter-disclosure.module.css";

/**
 * A filter panel that, on a phone, waits behind a "Filters" button saying how many filters are
 * narrowing the list, so the first screen shows the list and not a stack of menus. Wider screens
 * show the panel itself and no button (filter-disclosure.module.css).
 */
export function FilterDisclosure({
  id,
  active,
  toggleRowClassName,
  children,
}: {
  /** the panel's element id, for the button's aria-controls */
  id: string;
  /** how many filters are set */
  active: number;
  /** extra class for the button's row, say for the space below it on a page without a grid gap */
  toggleRowClassName?: string;
  children: ReactNode;
}) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <div className={`${styles.toggleRow} ${toggleRowClassName ?? ""}`}>
        <button
          type="button"
          className={`shell-button ${styles.toggle}`}
          aria-expanded={open}
          aria-controls={id}
          aria-label={active > 0 ? `Filters, ${active} active` : undefined}
          onClick={() => setOpen((was) => !was)}
        >
          Filters
          {active > 0 && (
            <span className={styles.count} aria-hidden="true">
              {active}
            </span>
          )}
        </button>
      </div>
      <div id={id} className={styles.panel} data-collapsed={open ? undefined : "true"}>
        {children}
      </div>
    </>
  );
}
