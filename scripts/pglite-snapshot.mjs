// `npm run build`: the ready-made embedded data directory new data directories and in-memory stores
// start from (src/store/pglite-snapshot.ts), made by the PGlite installed and the migrations in dist/.
// Kept when what it is made from is unchanged (the PGlite, the migrations, the code that makes it).
import { makeSnapshot } from '../dist/store/pglite.js';
import { snapshotUpToDate } from '../dist/store/pglite-snapshot.js';

if (snapshotUpToDate()) {
  process.stdout.write('spool: the embedded data directory snapshot is up to date\n');
} else {
  const started = Date.now();
  await makeSnapshot();
  process.stdout.write(
    `spool: made the embedded data directory snapshot in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
}
