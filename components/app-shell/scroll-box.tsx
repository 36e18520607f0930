"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * A box that scrolls sideways on its own (a wide table on a phone) so the page never does. While
 * its content overflows it is a named, focusable region, so it can be scrolled from the keyboard
 * (WCAG 2.1.1; axe's scrollable-region-focusable); when everything fits it is a plain box and adds
 * no tab stop.
 */
export function ScrollBox({
  label,
  className,
  children,
}: {
  label: string;
  className?: string;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [overflows, setOverflows] = useState(false);
  useEffect(() => {
    const box = ref.current;
    if (!box) return;
    const measure = () => setOverflows(box.scrollWidth > box.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    if (box.firstElementChild) observer.observe(box.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div
      ref={ref}
      className={`scroll-box${className ? ` ${className}` : ""}`}
      data-overflows={overflows ? "true" : undefined}
      // Said as "People, scrolls sideways": a name of its own, not the page section's it sits in.
      {...(overflows
        ? { role: "region", "aria-label": `${label}, scrolls sideways`, tabIndex: 0 }
        : {})}
    >
      {children}
    </div>
  );
}
