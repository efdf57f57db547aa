import { closeSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Store } from '../store/store.js';
import type { RunRecord } from '../store/types.js';
import type { PassOutput } from '../executor/executor.js';

const TAIL_MS = 150;

/**
 * A pass writes stdout and stderr into one file (so their order is kept); this copies what it
 * writes into the store as it goes, where `spool logs` reads it.
 */
export function captureLog(store: Store, logsDir: string, run: RunRecord): PassOutput {
  const dir = join(logsDir, run.id.replace(/[^a-z0-9-]/gi, '_'));
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `pass-${run.passes}.log`);
  const fd = openSync(path, 'a+');
  const reader = openSync(path, 'r');
  const decoder = new StringDecoder('utf8');
  const buffer = Buffer.alloc(64 * 1024);
  let offset = 0;
  let copying: Promise<void> = Promise.resolve();

  const copy = (): Promise<void> => {
    copying = copying.then(async () => {
      let text = '';
      for (let read = readSync(reader, buffer, 0, buffer.length, offset); read > 0; read = readSync(reader, buffer, 0, buffer.length, offset)) {
        offset += read;
        text += decoder.write(buffer.subarray(0, read));
      }
      if (text) await store.appendLog(run.id, run.passes, text);
    });
    return copying;
  };
  const timer = setInterval(() => void copy().catch(() => undefined), TAIL_MS);

  return {
    fd,
    async close() {
      clearInterval(timer);
      await copy();
      const rest = decoder.end();
      if (rest) await store.appendLog(run.id, run.passes, rest);
      closeSync(fd);
      closeSync(reader);
    },
  };
}
