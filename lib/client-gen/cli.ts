import { writeFile } from "node:fs/promises";
import { generateClients } from "./generate";

// `npm run generate:clients`: writes the clients' generated contract files (lib/client-gen/generate.ts).

for (const [file, content] of Object.entries(await generateClients())) {
  await writeFile(file, content);
  console.log(`wrote ${file}`);
}
