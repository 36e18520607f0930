import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// CPU caps for the bench's app instances: a cgroup (v1, the `cpu` controller) per instance, so
// that each one has a fixed share of a core as if it ran on a small host of its own, and adding
// instances measures the design (does a second instance add its share?) rather than two cores
// that the instances, sqld and the load generator all share. Needs root and cgroup v1's cpu
// controller mounted at /sys/fs/cgroup/cpu; where that is missing the caller runs uncapped and
// says so. Every group made here is removed by `removeCpuCaps` (the bench's cleanup calls it).

const ROOT = "/sys/fs/cgroup/cpu";
const PERIOD_US = 100_000;
const made = new Set<string>();

/** Why CPU caps are not available here, or null when they are. */
export function cpuCapsUnavailable(): string | null {
  if (!existsSync(join(ROOT, "cpu.cfs_quota_us"))) return `no cgroup v1 cpu controller at ${ROOT}`;
  if (process.getuid?.() !== 0) return "not running as root";
  return null;
}

/** Puts process `pid` (all its threads) in a new cgroup limited to `cores` of CPU time. */
export function capCpu(pid: number, cores: number): string {
  const dir = join(ROOT, `countersign-bench-${process.pid}-${pid}`);
  mkdirSync(dir);
  made.add(dir);
  writeFileSync(join(dir, "cpu.cfs_period_us"), String(PERIOD_US));
  writeFileSync(join(dir, "cpu.cfs_quota_us"), String(Math.round(cores * PERIOD_US)));
  writeFileSync(join(dir, "cgroup.procs"), String(pid));
  return dir;
}

/** How often the group's processes were held back by the cap, and for how long in all. */
export function throttled(dir: string): { periods: number; throttledMs: number } {
  const stat = Object.fromEntries(
    readFileSync(join(dir, "cpu.stat"), "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split(" ") as [string, string]),
  );
  return {
    periods: Number(stat.nr_throttled ?? 0),
    throttledMs: Number(stat.throttled_time ?? 0) / 1e6,
  };
}

/** Moves whatever is left in each group made here back to the root group, and removes the groups. */
export function removeCpuCaps(): void {
  for (const dir of made) {
    try {
      const tasks = readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
      for (const task of tasks) writeFileSync(join(ROOT, "cgroup.procs"), task);
      rmdirSync(dir);
      made.delete(dir);
    } catch (error) {
      console.error(`bench: could not remove the cgroup ${dir}: ${String(error)}`);
    }
  }
}
