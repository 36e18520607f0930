"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import type { ViewerRole } from "@/lib/queues/viewer-role";

// Who can use each page (the pages still authorize for themselves): the navigation offers a
// person only what their role opens, not links to "Only an admin…" pages (issue 26).
const LEAD: ViewerRole[] = ["lead", "admin"];
const ADMIN: ViewerRole[] = ["admin"];

// Grouped so the phone menu reads as two short lists instead of twelve links in a row; on a wide
// screen the groups sit side by side with a divider and their labels hidden.
type NavLink = { href: string; label: string; roles?: ViewerRole[] };

const GROUPS: { id: string; label: string; links: NavLink[] }[] = [
  {
    id: "review",
    label: "Review",
    links: [
      { href: "/queue", label: "Queue" },
      { href: "/history", label: "History" },
      { href: "/insights", label: "Insights", roles: LEAD },
    ],
  },
  {
    id: "admin",
    label: "Admin",
    links: [
      { href: "/queues", label: "Queues" },
      { href: "/routing", label: "Routing", roles: ADMIN },
      { href: "/policies", label: "Policies" },
      { href: "/agents", label: "Agents", roles: LEAD },
      { href: "/people", label: "People", roles: LEAD },
      { href: "/tokens", label: "Tokens" },
      { href: "/notifications", label: "Notifications" },
      { href: "/audit", label: "Audit", roles: ADMIN },
      { href: "/settings/sso", label: "SSO", roles: ADMIN },
    ],
  },
];

// "/queue" must not light up on "/queues": match whole path segments.
const isCurrent = (pathname: string, href: string) =>
  pathname === href || pathname.startsWith(`${href}/`);

export function NavLinks({ role }: { role: ViewerRole }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className="shell-nav">
      {GROUPS.map((group) => (
        <div key={group.id} className="shell-nav-group">
          <span id={`nav-group-${group.id}`} className="shell-nav-label">
            {group.id === "admin" && role !== "admin" ? "Settings" : group.label}
          </span>
          <ul aria-labelledby={`nav-group-${group.id}`}>
            {group.links
              .filter((link) => !link.roles || link.roles.includes(role))
              .map((link) => (
                <li key={link.href}>
                  <Link
                    href={link.href}
                    aria-current={isCurrent(pathname, link.href) ? "page" : undefined}
                  >
                    {link.label}
                  </Link>
                </li>
              ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}
