import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, renameSync, rmSync, statSync, type WriteStream } from 'node:fs';
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
  const hash = createHash('sha256');
  let size = 0;
  let part: ArtifactPart = first;
  try {
    for (;;) {
      const bytes = Buffer.from(part.data, 'base64');
      hash.update(bytes);
      size += bytes.length;
      await write(out, bytes);
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
    if (out !== process.stdout) {
      await new Promise<void>((resolve, reject) => (out as WriteStream).end((error?: Error | null) => (error ? reject(error) : resolve())));
      renameSync(partial, dest);
    }
    return { answer: { status: 'ok', exitCode: 0 } };
  } catch (error) {
    return { message: `spool artifact get: cannot write ${dest}: ${(error as Error).message}`, exitCode: EXIT.failure };
  } finally {
    if (out !== process.stdout) {
      (out as WriteStream).destroy();
      rmSync(partial, { force: true });
    }
  }
}
