"use client";

import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";

// The insights page's charts (recharts: SVG, no eval, so the page's CSP holds; its inline
// `style` attributes are allowed by style-src). They are pictures of the tables beside them:
// hidden from assistive technology, which reads the table (the numbers are the same).
// Colours are the theme's CSS variables, so light and dark follow the page.

const APPROVED = "var(--ok)";
const REJECTED = "var(--danger)";
const AXIS = { stroke: "var(--muted)", fontSize: 12, tick: { fill: "var(--muted)" } };
const TOOLTIP = {
  contentStyle: {
    background: "var(--card)",
    border: "1px solid var(--border)",
    borderRadius: 8,
    color: "var(--fg)",
  },
  cursor: { fill: "var(--info-bg)" },
};

function Frame({ height, children }: { height: number; children: React.ReactElement }) {
  return (
    <div aria-hidden="true" data-testid="insights-chart" style={{ width: "100%", height }}>
      <ResponsiveContainer width="100%" height="100%">
        {children}
      </ResponsiveContainer>
    </div>
  );
}

export type ActivityBar = { label: string; created: number; settled: number };

/** Cards created and settled per hour, day or week. */
export function ActivityChart({ bars }: { bars: ActivityBar[] }) {
  return (
    <Frame height={240}>
      <BarChart data={bars} accessibilityLayer={false} margin={{ top: 8, right: 8, left: 0 }}>
        <CartesianGrid stroke="var(--border)" vertical={false} />
        <XAxis dataKey="label" {...AXIS} minTickGap={16} />
        <YAxis allowDecimals={false} width={44} {...AXIS} />
        <Tooltip {...TOOLTIP} />
        <Legend />
        <Bar dataKey="created" name="Created" fill="var(--accent)" isAnimationActive={false} />
        <Bar dataKey="settled" name="Settled" fill="var(--muted)" isAnimationActive={false} />
      </BarChart>
    </Frame>
  );
}

export type OutcomeBar = { label: string; approved: number; rejected: number };

/** Approved and rejected, stacked, one bar per source, tool, agent or reviewer. */
export function OutcomeChart({ bars }: { bars: OutcomeBar[] }) {
  const height = Math.max(140, 34 * bars.length + 60);
  return (
    <Frame height={height}>
      <BarChart
        data={bars}
        layout="vertical"
        accessibilityLayer={false}
        margin={{ top: 4, right: 12, left: 4 }}
      >
        <CartesianGrid stroke="var(--border)" horizontal={false} />
        <XAxis type="number" allowDecimals={false} {...AXIS} />
        <YAxis type="category" dataKey="label" width={130} {...AXIS} />
        <Tooltip {...TOOLTIP} />
        <Legend />
        <Bar
          dataKey="approved"
          name="Approved"
          stackId="o"
          fill={APPROVED}
          isAnimationActive={false}
        />
        <Bar
          dataKey="rejected"
          name="Rejected"
          stackId="o"
          fill={REJECTED}
          isAnimationActive={false}
        />
      </BarChart>
    </Frame>
  );
}

export type WaitBar = { label: string; value: number };

/** Time to decision at p50, p90 and p99, in `unit` (seconds, minutes or hours: the page picks). */
export function WaitChart({ bars, unit }: { bars: WaitBar[]; unit: "s" | "min" | "h" }) {
  return (
    <Frame height={180}>
      <BarChart
        data={bars}
        layout="vertical"
        accessibilityLayer={false}
        margin={{ top: 4, right: 12, left: 4 }}
      >
        <CartesianGrid stroke="var(--border)" horizontal={false} />
        <XAxis type="number" unit={` ${unit}`} {...AXIS} />
        <YAxis type="category" dataKey="label" width={44} {...AXIS} />
        <Tooltip {...TOOLTIP} />
        <Bar
          dataKey="value"
          name={`Wait (${unit})`}
          fill="var(--accent)"
          isAnimationActive={false}
        />
      </BarChart>
    </Frame>
  );
}
