import { loadEnvFiles } from "@/lib/config/load-env";
import { closeDb, databaseUrlForDisplay } from "./client";
import { migrateDatabase } from "./migrate";

// `npm run db:migrate`, on the database the server would use (.env read as it reads it). An entry
// of its own, not an "am I the main module?" check in migrate.ts: inside a bundle that imports
// migrate.ts (the admin CLI bundled for tests) that check is true, and would migrate on import.
loadEnvFiles();
// The client is closed when done: an open WebSocket (a ws:// or wss:// URL) would keep the process,
// and a deploy pipeline that migrates first, waiting forever.
migrateDatabase()
  .then(() => {
    console.log(`Migrated ${databaseUrlForDisplay()}`);
    closeDb();
  })
  .catch((error) => {
    console.error(error);
    closeDb();
    process.exit(1);
  });
