import { closeSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

const TAIL_MS = 150;

export interface FileTail {
  /** The descriptor to give a child as both stdout and stderr (one file keeps their order). */
  fd: number;
  /** Copies what is left, then closes and removes the file (its text has all gone to onText). */
  close(): Promise<void>;
}

/**
 * A file a process writes its output into, read back as it grows: every new piece of text goes to
 * `onText`, in order, one call at a time.
 */
export function tailFile(path: string, onText: (text: string) => Promise<void> | void): FileTail {
  mkdirSync(dirname(path), { recursive: true });
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
      if (text) await onText(text);
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
      if (rest) await onText(rest);
      closeSync(fd);
      closeSync(reader);
      rmSync(path, { force: true });
    },
  };
}
