"use client";

import { usePathname } from "next/navigation";
import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * The header's links and tools. On a wide screen they are simply laid out in the header (the
 * button is hidden by CSS); below the phone breakpoint (app/globals.css) they fold behind a
 * disclosure button: Escape or a tap outside closes it, and following a link closes it too.
 */
export function ShellMenu({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);
  const pathname = usePathname();

  // A link followed from the menu lands on a new page with the menu out of the way.
  const [shownFor, setShownFor] = useState(pathname);
  if (shownFor !== pathname) {
    setShownFor(pathname);
    setOpen(false);
  }

  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      // The queue's own Escape handling (closing a reason box) must not also run.
      event.stopPropagation();
      setOpen(false);
      buttonRef.current?.focus();
    };
    const onPointer = (event: PointerEvent) => {
      const target = event.target as Node;
      if (panelRef.current?.contains(target) || buttonRef.current?.contains(target)) return;
      setOpen(false);
    };
    // Focus that leaves the menu (Tab past its last control) closes it, so it never hides the page.
    const onFocus = (event: FocusEvent) => {
      const target = event.target as Node;
      if (panelRef.current?.contains(target) || buttonRef.current?.contains(target)) return;
      setOpen(false);
    };
    document.addEventListener("keydown", onKey, true);
    document.addEventListener("pointerdown", onPointer);
    document.addEventListener("focusin", onFocus);
    return () => {
      document.removeEventListener("keydown", onKey, true);
      document.removeEventListener("pointerdown", onPointer);
      document.removeEventListener("focusin", onFocus);
    };
  }, [open]);

  return (
    <>
      <button
        ref={buttonRef}
        type="button"
        className="shell-button shell-menu-button"
        aria-expanded={open}
        aria-controls="shell-menu"
        onClick={() => setOpen((was) => !was)}
      >
        <span aria-hidden="true" className="shell-menu-icon" />
        Menu
      </button>
      <div
        ref={panelRef}
        id="shell-menu"
        className="shell-menu"
        data-open={open ? "true" : undefined}
        onClick={(event) => {
          // A link tapped on the page already shown changes no path: close here too.
          if ((event.target as HTMLElement).closest("a")) setOpen(false);
        }}
      >
        {children}
      </div>
    </>
  );
}
