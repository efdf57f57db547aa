import { closeSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Utf8Pieces } from './output-bytes.js';

const TAIL_MS = 150;

/**
 * Every tail reads into this one buffer: a read and the copy out of it happen with no await between,
 * so tails never share it at once, and a pass no longer allocates 64 KiB the collector must count.
 */
const readBuffer = Buffer.allocUnsafe(64 * 1024);

export interface FileTail {
  /** The descriptor to give a child as both stdout and stderr (one file keeps their order). */
  fd: number;
  /** Copies what is left, then closes and removes the file (its text has all gone to onText). */
  close(): Promise<void>;
}

/**
 * A file a process writes its output into, read back as it grows: every new piece goes to
 * `onBytes`, in order, one call at a time, as bytes (output is bytes), cut only between UTF-8
 * characters.
 */
export function tailFile(path: string, onBytes: (bytes: Buffer) => Promise<void> | void): FileTail {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'a+');
  const reader = openSync(path, 'r');
  const pieces = new Utf8Pieces();
  let offset = 0;
  let copying: Promise<void> = Promise.resolve();

  const copy = (): Promise<void> => {
    copying = copying.then(async () => {
      const read: Buffer[] = [];
      for (let got = readSync(reader, readBuffer, 0, readBuffer.length, offset); got > 0; got = readSync(reader, readBuffer, 0, readBuffer.length, offset)) {
        offset += got;
        read.push(pieces.write(Buffer.from(readBuffer.subarray(0, got))));
      }
      const bytes = Buffer.concat(read);
      if (bytes.length) await onBytes(bytes);
    });
    return copying;
  };
  const timer = setInterval(() => void copy().catch(() => undefined), TAIL_MS);

  return {
    fd,
    async close() {
      clearInterval(timer);
      await copy();
      const rest = pieces.end();
      if (rest.length) await onBytes(rest);
      closeSync(fd);
      closeSync(reader);
      rmSync(path, { force: true });
    },
  };
}
