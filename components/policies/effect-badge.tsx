import { Badge, type Tone } from "@/components/run-timeline/badges";
import type { PolicyEffect } from "@/db/schema";

export const EFFECTS: Record<PolicyEffect, { label: string; tone: Tone; help: string }> = {
  allow: { label: "Allow", tone: "ok", help: "approve the call at once" },
  ask: { label: "Ask", tone: "warn", help: "a reviewer decides" },
  deny: { label: "Deny", tone: "danger", help: "block the call; the agent is told why" },
};

export function EffectBadge({ effect }: { effect: PolicyEffect }) {
  return (
    <span data-testid="policy-effect" data-effect={effect}>
      <Badge tone={EFFECTS[effect].tone}>{EFFECTS[effect].label}</Badge>
    </span>
  );
}
