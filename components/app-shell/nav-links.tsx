"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

const LINKS = [
  { href: "/queue", label: "Queue" },
  { href: "/history", label: "History" },
  { href: "/queues", label: "Queues" },
  { href: "/routing", label: "Routing" },
  { href: "/policies", label: "Policies" },
  { href: "/agents", label: "Agents" },
  { href: "/people", label: "People" },
  { href: "/tokens", label: "Tokens" },
  { href: "/notifications", label: "Notifications" },
  { href: "/audit", label: "Audit" },
];

// "/queue" must not light up on "/queues": match whole path segments.
const isCurrent = (pathname: string, href: string) =>
  pathname === href || pathname.startsWith(`${href}/`);

export function NavLinks() {
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className="shell-nav">
      {LINKS.map((link) => (
        <Link
          key={link.href}
          href={link.href}
          aria-current={isCurrent(pathname, link.href) ? "page" : undefined}
        >
          {link.label}
        </Link>
      ))}
    </nav>
  );
}
