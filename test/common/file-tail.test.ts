import { mkdtempSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tailFile } from '../../src/common/file-tail.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('tailFile', () => {
  it('given passes whose logs are tailed at once, each gets back exactly its own bytes, past one read and not UTF-8', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spool-tail-'));
    // Tails share one read buffer: what each writes must still reach only its own reader.
    const tails = [0, 1, 2].map((n) => {
      const got: Buffer[] = [];
      const tail = tailFile(join(dir, `run-${n}`, 'pass-1.log'), (bytes) => void got.push(bytes));
      return { n, got, tail, wrote: [] as Buffer[] };
    });
    for (let round = 0; round < 6; round++) {
      for (const each of tails) {
        // 50 KiB of this tail's own byte, a NUL and a byte that is not UTF-8: 150 KiB a round across tails.
        const bytes = Buffer.concat([Buffer.alloc(50 * 1024, 0x61 + each.n), Buffer.from([0, 0xff, round])]);
        writeSync(each.tail.fd, bytes);
        each.wrote.push(bytes);
      }
      await sleep(round % 2 ? 200 : 0);
    }
    await Promise.all(tails.map((each) => each.tail.close()));
    for (const each of tails) expect(Buffer.concat(each.got).equals(Buffer.concat(each.wrote))).toBe(true);
  });
});
