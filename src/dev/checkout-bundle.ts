import { openSync, readSync, closeSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../common/errors.js';
import { bundleFiles, type BundleFile } from '../common/bundle/files.js';
import { END, fileHeader, fitsUstar, padding } from '../common/bundle/ustar.js';
import { maxCheckoutBytes } from '../engine/limits.js';
import { ARTIFACT_PART_BYTES } from '../engine/protocol.js';
import { storeCheckout } from '../server/checkout-store.js';
import type { Store } from '../store/store.js';

/** The files `--with DIR` bundles, checked before anything is recorded: a bundle over the limit is refused. */
export function checkoutFiles(dir: string, option = '--with'): { root: string; files: BundleFile[] } {
  const root = resolve(dir);
  let files: BundleFile[];
  try {
    files = bundleFiles(root);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${option} ${dir}: ${code === 'ENOENT' ? 'no such directory' : code === 'ENOTDIR' ? 'not a directory' : (error as Error).message}`);
  }
  const long = files.find((file) => !fitsUstar(file.path));
  if (long) throw new UsageError(`${option} ${dir}: the path ${long.path} is too long to bundle (a tar name of at most 255 bytes)`);
  const total = files.reduce((sum, file) => sum + file.size, 0);
  const limit = maxCheckoutBytes();
  if (total > limit) {
    throw new UsageError(
      `${option} ${dir}: its files come to ${total} bytes, over the ${limit}-byte limit for a checkout bundle ` +
        `(SPOOL_MAX_CHECKOUT_BYTES); list what to leave out in a .gitignore`,
    );
  }
  return { root, files };
}

/**
 * The bundle as a ustar archive, produced a piece at a time (a file is read in parts of
 * ARTIFACT_PART_BYTES), for storeCheckout or an upload's request body.
 */
export function* bundleStream(files: readonly BundleFile[]): Generator<Buffer> {
  const buffer = Buffer.alloc(ARTIFACT_PART_BYTES);
  for (const file of files) {
    yield fileHeader(file.path, file.size, file.executable);
    const fd = openSync(file.absolute, 'r');
    try {
      let left = file.size;
      while (left > 0) {
        const read = readSync(fd, buffer, 0, Math.min(buffer.length, left), null);
        if (read === 0) throw new UsageError(`${file.absolute} shrank while it was bundled; try again`);
        yield Buffer.from(buffer.subarray(0, read));
        left -= read;
      }
    } finally {
      closeSync(fd);
    }
    yield padding(file.size);
  }
  yield END;
}

/** Stores the bundle as the run's artifact `spool/checkout.tar` (spool run --with). */
export async function storeRunCheckout(store: Store, runId: string, files: readonly BundleFile[]): Promise<void> {
  await storeCheckout(store, runId, `${runId}/checkout/`, bundleStream(files), maxCheckoutBytes());
}
