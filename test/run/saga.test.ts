import { afterAll, describe, expect, it } from 'vitest';
import { linesOf, removeTempDirs, runIdOf, spool, tempDir, writeFiles } from '../support/spool.js';

afterAll(removeTempDirs);

/** The Saga recipe, exactly as the durable-patterns page gives it (also examples/saga.sh). */
const SAGA = `booked=()   # booking ids, in the order they were made

rollback() {
  for (( i=\${#booked[@]}-1; i>=0; i-- )); do
    spool step cancel --label "\${booked[i]}" -- echo "cancelled \${booked[i]}"
  done
  exit 1
}

flight="$(spool step book-flight -- echo FL-881)" || rollback
booked+=("$flight")

hotel="$(spool step book-hotel -- echo HT-2207)" || rollback
booked+=("$hotel")

car="$(spool step book-car -- sh -c 'echo "no cars left" >&2; exit 1')" || rollback
booked+=("$car")

spool step confirm -- echo "booked $flight, $hotel and $car"
`;

describe('the saga recipe', () => {
  it('given a failing car booking, when run, then it cancels the hotel and the flight, newest first, and fails', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'saga.sh': SAGA });

    const { code, output } = await spool(['run', 'saga.sh', '--data-dir', `${dir}/data`], { cwd: dir });

    const id = runIdOf(output);
    expect(linesOf(output)).toEqual([
      `  run: ${id}`,
      'no cars left',
      'cancelled HT-2207',
      'cancelled FL-881',
      `  ${id} failed: script exited 1`,
    ]);
    expect(code).toBe(1);
  }, 120_000);
});
