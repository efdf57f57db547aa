import { PGlite } from '@electric-sql/pglite';
for (let i = 0; i < 3; i++) {
  let t = performance.now();
  const db = await PGlite.create();
  const t1 = performance.now();
  await db.query('select 1');
  const c = await db.clone?.();
  const t2 = performance.now();
  console.log('create', (t1 - t).toFixed(0), 'clone', c ? (t2 - t1).toFixed(0) : 'n/a');
  await db.close();
}
const db = await PGlite.create();
let t = performance.now();
const dump = await db.dumpDataDir('none');
console.log('dump', (performance.now() - t).toFixed(0), dump.size);
t = performance.now();
const db2 = await PGlite.create({ loadDataDir: dump });
console.log('load', (performance.now() - t).toFixed(0));
