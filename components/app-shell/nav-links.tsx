"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

// Grouped so the phone menu reads as two short lists instead of twelve links in a row; on a wide
// screen the groups sit side by side with a divider and their labels hidden.
const GROUPS = [
  {
    id: "review",
    label: "Review",
    links: [
      { href: "/queue", label: "Queue" },
      { href: "/history", label: "History" },
      { href: "/insights", label: "Insights" },
    ],
  },
  {
    id: "admin",
    label: "Admin",
    links: [
      { href: "/queues", label: "Queues" },
      { href: "/routing", label: "Routing" },
      { href: "/policies", label: "Policies" },
      { href: "/agents", label: "Agents" },
      { href: "/people", label: "People" },
      { href: "/tokens", label: "Tokens" },
      { href: "/notifications", label: "Notifications" },
      { href: "/audit", label: "Audit" },
      { href: "/settings/sso", label: "SSO" },
    ],
  },
];

// "/queue" must not light up on "/queues": match whole path segments.
const isCurrent = (pathname: string, href: string) =>
  pathname === href || pathname.startsWith(`${href}/`);

export function NavLinks() {
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className="shell-nav">
      {GROUPS.map((group) => (
        <div key={group.id} className="shell-nav-group">
          <span id={`nav-group-${group.id}`} className="shell-nav-label">
            {group.label}
          </span>
          <ul aria-labelledby={`nav-group-${group.id}`}>
            {group.links.map((link) => (
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
