import type { AuditEntry } from "./list-audit";

// One line per trust change, for the audit page: what happened, to whom. Events are rows written
// long ago by whatever version ran then, so every field is read defensively.

const text = (value: unknown) => (typeof value === "string" ? value : "");
const fromSso = (d: Record<string, unknown>) =>
  d.source === "sso" ? " (from their identity-provider groups)" : "";

export function describeTrustEvent(event: AuditEntry): string {
  const d = event.data;
  const key = text(d.keyPrefix) ? ` (${text(d.keyPrefix)}…)` : "";
  const agent = `agent key '${text(d.name)}'${key}`;
  switch (event.type) {
    case "agent.created":
      return `Created ${agent}`;
    case "agent.rotated":
      return `Rotated ${agent}; the old key works until ${text(d.previousKeyExpiresAt) || "now"}`;
    case "agent.revoked":
      return `Revoked ${agent}`;
    case "agent.mode_changed":
      return `Set the mode of agent '${text(d.name)}' from ${text(d.before)} to ${text(d.after)}`;
    case "reviewer_token.created":
      return `Created personal token ${text(d.tokenPrefix)}… of ${text(d.userEmail) || text(d.userId)}`;
    case "reviewer_token.revoked":
      return `Revoked personal token ${text(d.tokenPrefix)}… of ${text(d.userEmail) || text(d.userId)}`;
    case "session.signed_out_everywhere":
      return d.revokeTokens
        ? "Signed out everywhere and revoked their personal tokens"
        : "Signed out everywhere";
    case "member.added":
      return `Added ${text(d.name)} to a queue as ${text(d.role)}${fromSso(d)}`;
    case "member.removed":
      return `Removed ${text(d.name)} from a queue`;
    case "member.role_changed":
      return `Changed the role of ${text(d.name)} from ${text(d.before)} to ${text(d.after)}${fromSso(d)}`;
    case "person.sso_linked":
      return `Linked ${text(d.userId)} to their single sign-on account`;
    case "person.joined_by_sso":
      return `${text(d.name)} <${text(d.email)}> joined by single sign-on (an allowed email domain)`;
    case "sso.settings_updated": {
      const base = `${d.enabled ? "Set up" : "Switched off"} single sign-on with ${text(d.issuer)}${d.clientSecretChanged ? " (new client secret)" : ""}`;
      if (!text(d.previousIssuer)) return base;
      const links = typeof d.linksRetired === "number" ? d.linksRetired : 0;
      return `${base}; the issuer was ${text(d.previousIssuer)}: ${links} single sign-on ${links === 1 ? "link" : "links"} made with it retired (people link again by verified email)`;
    }
    case "mcp_gateway.created":
      return `Added MCP gateway '${text(d.name)}' for ${text(d.url)}`;
    case "mcp_gateway.updated":
      return `Changed ${Array.isArray(d.changed) ? d.changed.join(", ") : "the settings"} of MCP gateway '${text(d.name)}'`;
    case "mcp_gateway.disabled":
      return `Disabled MCP gateway '${text(d.name)}'`;
    case "person.sso_password_proven":
      return `${text(d.email) || text(d.userId)} signed in with their password and then single sign-on: the two are linked`;
    case "person.invited":
      return `Invited ${text(d.name)} <${text(d.email)}> by a one-time link`;
    case "person.created":
      return `Created ${text(d.name)} <${text(d.email)}> with a password`;
    case "person.invite_accepted":
      return `${text(d.email)} accepted their invite and set a password`;
    case "person.renamed":
      return `Renamed ${text(d.email)} from '${text(d.before)}' to '${text(d.after)}'`;
    case "person.deactivated":
      return `Deactivated ${text(d.email)}: signed out everywhere, personal tokens revoked`;
    case "person.reactivated":
      return `Reactivated ${text(d.email)}`;
    case "person.password_reset_issued":
      return `Issued a password reset link for ${text(d.email)}`;
    case "person.password_reset_used":
      return `${text(d.email)} set a new password with a reset link`;
    default: {
      // whatever comes next: the event's own fields, briefly
      const who = text(d.email) || text(d.name) || text(d.userId);
      return who ? `${event.type} · ${who}` : event.type;
    }
  }
}
