import { spawnSync } from "node:child_process";
import { buildIsCurrent } from "./build-freshness";

// `npm start` runs this first: it builds the app (`npm run build`, a few minutes) only when there
// is no production build or a source file changed since it was made, so starting an already-built
// checkout takes seconds. `npm run build` still builds unconditionally.

if (buildIsCurrent(process.cwd())) {
  console.log("Countersign: the production build is up to date (npm run build rebuilds it).");
} else {
  console.log("Countersign: building the app (a few minutes, once per change)…");
  const built = spawnSync("npm", ["run", "build"], { stdio: "inherit" });
  process.exit(built.status ?? 1);
}
