import { createHash } from 'node:crypto';
import { UstarReader } from '../common/bundle/ustar.js';
import { ARTIFACT_PART_BYTES, CHECKOUT_ARTIFACT } from '../engine/protocol.js';
import type { ArtifactRecord } from '../store/artifacts/types.js';
import type { Store } from '../store/store.js';

/** What a bundle stream over its limit throws: nothing of it is kept. */
export class CheckoutTooBig extends Error {}

/** What a bundle that is not an archive spool could have written throws: nothing of it is kept. */
export class CheckoutRefused extends Error {}

/**
 * Reads the archive as it arrives (issue 28, bug 11): regular files and directories only, paths
 * that stay inside the directory, headers whose checksum holds, the files together within the
 * limit (refused at the header that passes it, before its bytes are read), and the end-of-archive
 * blocks at the end. An upload was taken whatever its bytes, and failed later in every pass.
 */
function archiveCheck(limit: number): { push(bytes: Buffer): void; end(): void } {
  let files = 0;
  const reader = new UstarReader(
    (entry) => {
      files += entry.size;
      if (files > limit) throw new CheckoutTooBig(`the checkout bundle's files are over the ${limit}-byte limit (SPOOL_MAX_CHECKOUT_BYTES)`);
    },
    () => undefined,
    () => undefined,
  );
  return {
    push(bytes) {
      try {
        reader.push(bytes);
      } catch (error) {
        throw error instanceof CheckoutTooBig ? error : new CheckoutRefused((error as Error).message);
      }
    },
    end() {
      if (!reader.ended) throw new CheckoutRefused('the checkout bundle was cut short: it ends before its end-of-archive blocks');
    },
  };
}

/**
 * Stores a checkout bundle (a ustar archive, as chunks of any size) as the artifact
 * `spool/checkout.tar` of `owner` (a run id, or a pending upload's `checkout-upload:<id>`): parts
 * of ARTIFACT_PART_BYTES go to the blob backend as they fill, so the bundle is never whole in memory.
 */
export async function storeCheckout(store: Store, owner: string, blobKey: string, chunks: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer>, limit: number): Promise<ArtifactRecord> {
  const hash = createHash('sha256');
  const archive = archiveCheck(limit);
  let part: Buffer = Buffer.alloc(0);
  let parts = 0;
  let size = 0;
  try {
    for await (const chunk of chunks) {
      const bytes = Buffer.from(chunk);
      size += bytes.length;
      // The archive's headers and padding count too: a bundle of files just under the limit is refused here.
      if (size > limit + 1024 * 1024) throw new CheckoutTooBig(`the checkout bundle is over the ${limit}-byte limit (SPOOL_MAX_CHECKOUT_BYTES)`);
      archive.push(bytes);
      hash.update(bytes);
      part = part.length ? Buffer.concat([part, bytes]) : bytes;
      while (part.length >= ARTIFACT_PART_BYTES) {
        await store.artifacts.blobs.writePart(blobKey, parts++, part.subarray(0, ARTIFACT_PART_BYTES));
        part = part.subarray(ARTIFACT_PART_BYTES);
      }
    }
    archive.end();
    if (part.length > 0) await store.artifacts.blobs.writePart(blobKey, parts++, part);
  } catch (error) {
    await store.artifacts.blobs.deletePrefix(blobKey);
    throw error;
  }
  return store.artifacts.record({
    runId: owner,
    name: CHECKOUT_ARTIFACT,
    position: -1,
    size,
    sha256: hash.digest('hex'),
    contentType: 'application/x-tar',
    blobKey,
    parts,
  });
}

/** Gives a new run the bundle a pending upload stored (`POST /v1/checkouts`); false when there is no such upload. */
export async function attachCheckout(store: Store, upload: string, runId: string): Promise<boolean> {
  const pending = await store.artifacts.get(`checkout-upload:${upload}`, CHECKOUT_ARTIFACT);
  if (!pending) return false;
  await store.artifacts.record({
    runId,
    name: pending.name,
    position: pending.position,
    size: pending.size,
    sha256: pending.sha256,
    contentType: pending.contentType,
    blobKey: pending.blobKey,
    parts: pending.parts,
  });
  return true;
}

/**
 * A rerun's bundle: the old run's, copied byte for byte under the new run's key before the new run
 * exists (its first pass may check out at once), so either run's retention leaves the other's whole.
 */
export async function copyCheckout(store: Store, fromRunId: string, toRunId: string): Promise<void> {
  const bundle = await store.artifacts.get(fromRunId, CHECKOUT_ARTIFACT);
  if (!bundle) return;
  const blobKey = `${toRunId}/checkout/`;
  for (let part = 0; part < bundle.parts; part++) {
    const bytes = await store.artifacts.blobs.readPart(bundle.blobKey, part);
    if (!bytes) throw new Error(`the checkout of ${fromRunId} has no part ${part}`);
    await store.artifacts.blobs.writePart(blobKey, part, bytes);
  }
  const { name, position, size, sha256, contentType, parts } = bundle;
  await store.artifacts.record({ runId: toRunId, name, position, size, sha256, contentType, blobKey, parts });
}
