// `npm run build`: the ready-made embedded data directory new data directories and in-memory stores
// start from (src/store/pglite-snapshot.ts), made by the PGlite installed and the migrations in dist/.
import { makeSnapshot } from '../dist/store/pglite.js';

const started = Date.now();
await makeSnapshot();
process.stdout.write(
  `spool: made the embedded data directory snapshot in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
