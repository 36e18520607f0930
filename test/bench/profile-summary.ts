import { readFileSync } from "node:fs";

// `npx tsx test/bench/profile-summary.ts <file.cpuprofile> [top]`: where a CPU profile written by
// `npm run bench -- --profile` (or `node --cpu-prof`) spent its time: the top functions by self
// time, by package or file, and by inclusive time (synchronous call stacks only).

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error("usage: tsx test/bench/profile-summary.ts <file.cpuprofile> [top]");
const top = Number(topArg) || 30;
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes)
  for (const child of node.children ?? []) parent.set(child, node.id);

const shortUrl = (url: string) =>
  url
    .replace(/.*node_modules\//, "nm/")
    .replace(/.*\/\.next\//, ".next/")
    .replace(/^file:\/\/\/.*?\/(lib|db|app)\//, "$1/");
const frameKey = (node: ProfileNode) =>
  `${node.callFrame.functionName || "(anonymous)"} ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber}`;
const packageKey = (node: ProfileNode) => {
  const url = shortUrl(node.callFrame.url);
  if (!url) return node.callFrame.functionName;
  if (url.startsWith("nm/"))
    return url
      .split("/")
      .slice(0, url.startsWith("nm/@") ? 3 : 2)
      .join("/");
  return url.split("/").slice(0, 2).join("/");
};

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const packages = new Map<string, number>();
let total = 0;
const add = (map: Map<string, number>, key: string, us: number) =>
  map.set(key, (map.get(key) ?? 0) + us);
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  total += us;
  const node = byId.get(id)!;
  add(self, frameKey(node), us);
  add(packages, packageKey(node), us);
  const seen = new Set<string>();
  for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
    const key = frameKey(byId.get(current)!);
    if (!seen.has(key)) add(inclusive, key, us);
    seen.add(key);
  }
});

const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${(us / 1000).toFixed(0).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`,
    );
  }
};
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
print("self time", self);
print("by package / file", packages);
print("inclusive (synchronous stacks)", inclusive);
