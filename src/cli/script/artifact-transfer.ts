import { createHash } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync, type WriteStream } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { UstarReader } from '../../common/bundle/ustar.js';
import { once } from 'node:events';
import { ARTIFACT_PART_BYTES, EXIT, type Answer, type ArtifactPart, type Request } from '../../engine/protocol.js';
import type { AgentClient } from './client.js';

/** What a transfer ends with: the answer to print, or a line of its own and an exit code. */
export type TransferEnd = { answer: Answer } | { message: string; exitCode: number };

/** Reads `source` (a file, or stdin for '-') in parts of at most ARTIFACT_PART_BYTES. */
async function* parts(source: string): AsyncGenerator<Buffer> {
  const stream = source === '-' ? process.stdin : createReadStream(source, { highWaterMark: ARTIFACT_PART_BYTES });
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    held.push(chunk);
    heldBytes += chunk.length;
    while (heldBytes >= ARTIFACT_PART_BYTES) {
      const joined = Buffer.concat(held);
      yield joined.subarray(0, ARTIFACT_PART_BYTES);
      held = [joined.subarray(ARTIFACT_PART_BYTES)];
      heldBytes = joined.length - ARTIFACT_PART_BYTES;
    }
  }
  if (heldBytes > 0) yield Buffer.concat(held);
}

/** The size of a put's file, known before any byte moves (so a file over the limit is refused at once). */
export function sourceSize(source: string): { size?: number } | { problem: string } {
  if (source === '-') return {};
  try {
    const stat = statSync(source);
    if (!stat.isFile()) return { problem: `${source} is not a file` };
    return { size: stat.size };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: `cannot read ${source}${code === 'ENOENT' ? ': no such file' : code ? `: ${code}` : ''}` };
  }
}

/** After a put answered execute: each part, then the commit with what was read. */
export async function sendArtifact(client: AgentClient, position: number, source: string): Promise<TransferEnd> {
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const part of parts(source)) {
      const answer = await client.request({ verb: 'artifact.write', position, data: part.toString('base64') });
      if (answer.status !== 'ok') return { answer };
      hash.update(part);
      size += part.length;
    }
  } catch (error) {
    return { message: `spool artifact put: cannot read ${source}: ${(error as Error).message}`, exitCode: EXIT.failure };
  }
  return { answer: await client.request({ verb: 'artifact.commit', position, size, sha256: hash.digest('hex') }) };
}

async function write(out: NodeJS.WritableStream | WriteStream, bytes: Buffer): Promise<void> {
  if (!out.write(bytes)) await once(out, 'drain');
}

/**
 * Each part of a get, from its first, handed to `sink` in order; then the size and sha256 checked
 * against what the artifact was stored as. Null when all is well.
 */
async function eachPart(
  client: AgentClient,
  request: Extract<Request, { verb: 'artifact.get' }>,
  first: ArtifactPart,
  sink: (bytes: Buffer) => Promise<void> | void,
): Promise<TransferEnd | null> {
  const hash = createHash('sha256');
  let size = 0;
  let part: ArtifactPart = first;
  for (;;) {
    const bytes = Buffer.from(part.data, 'base64');
    hash.update(bytes);
    size += bytes.length;
    await sink(bytes);
    if (part.part + 1 >= part.parts) break;
    const answer = await client.request({ ...request, part: part.part + 1 });
    if (answer.status !== 'ok') return { answer };
    part = answer.value as ArtifactPart;
  }
  const sha256 = hash.digest('hex');
  if (size !== first.size || sha256 !== first.sha256) {
    return {
      message: `spool artifact get: '${first.name}' arrived as ${size} bytes (sha256 ${sha256}), not the ${first.size} bytes (sha256 ${first.sha256}) it was stored as`,
      exitCode: EXIT.failure,
    };
  }
  return null;
}

const OK_END: TransferEnd = { answer: { status: 'ok', exitCode: 0 } };

/**
 * After a get's first part: the rest, part by part, into `dest` (stdout for '-'). A file is
 * written beside its name and renamed once whole and checked, so a failed get leaves no half file.
 */
export async function receiveArtifact(
  client: AgentClient,
  request: Extract<Request, { verb: 'artifact.get' }>,
  first: ArtifactPart,
  dest: string,
): Promise<TransferEnd> {
  const partial = `${dest}.spool-partial`;
  const out = dest === '-' ? process.stdout : createWriteStream(partial);
  try {
    const failed = await eachPart(client, request, first, (bytes) => write(out, bytes));
    if (failed) return failed;
    if (out !== process.stdout) {
      await new Promise<void>((resolve, reject) => (out as WriteStream).end((error?: Error | null) => (error ? reject(error) : resolve())));
      renameSync(partial, dest);
    }
    return OK_END;
  } catch (error) {
    return { message: `spool artifact get: cannot write ${dest}: ${(error as Error).message}`, exitCode: EXIT.failure };
  } finally {
    if (out !== process.stdout) {
      (out as WriteStream).destroy();
      rmSync(partial, { force: true });
    }
  }
}

/** A path from the bundle, refused if it would land outside `dest`. */
function inside(dest: string, path: string): string {
  if (isAbsolute(path) || path.split('/').includes('..')) throw new Error(`the bundle holds a path outside the checkout: ${path}`);
  return join(dest, path);
}

/**
 * `spool checkout [DEST]`: the run's bundle (a ustar archive) unpacked into DEST as its parts
 * arrive, a file at a time; files already there are overwritten.
 */
export async function extractCheckout(
  client: AgentClient,
  request: Extract<Request, { verb: 'artifact.get' }>,
  first: ArtifactPart,
  dest: string,
): Promise<TransferEnd> {
  let fd: number | null = null;
  let files = 0;
  try {
    const reader = new UstarReader(
      (entry) => {
        const path = inside(dest, entry.path);
        mkdirSync(dirname(path), { recursive: true });
        rmSync(path, { force: true });
        fd = openSync(path, 'w', entry.executable ? 0o755 : 0o644);
        files += 1;
      },
      (bytes) => {
        if (fd !== null) writeSync(fd, bytes);
      },
      () => {
        if (fd !== null) closeSync(fd);
        fd = null;
      },
    );
    mkdirSync(dest, { recursive: true });
    const failed = await eachPart(client, request, first, (bytes) => reader.push(bytes));
    if (failed) return failed;
    if (!reader.ended) return { message: `spool checkout: the bundle is cut short (no end-of-archive blocks); nothing more was unpacked into ${dest}`, exitCode: EXIT.failure };
    return { answer: { status: 'ok', exitCode: 0, stderr: `spool checkout: ${files} file${files === 1 ? '' : 's'} into ${dest}` } };
  } catch (error) {
    return { message: `spool checkout: cannot unpack into ${dest}: ${(error as Error).message}`, exitCode: EXIT.failure };
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
