import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { ok } from './answers.js';
import { send } from './connection.js';
import { ScriptError } from './errors.js';
import type { Request } from './protocol.js';

/**
 * Artifacts: files a run keeps between passes and pods (docs/artifacts.md). Bytes move in parts of
 * 512 KiB, each one request on the spool socket, so neither this process nor the agent holds a
 * whole artifact.
 */
const PART_BYTES = 512 * 1024;

export interface ArtifactPutOptions {
  /** The content type recorded with it; guessed from the name's extension when absent. */
  contentType?: string;
}

/**
 * Stores the file at `path` as this run's artifact `name`. Recorded: on a replay the agent answers
 * from the journal and the file is not opened (a new pod has none of the last pass's files); a new
 * put whose file cannot be read is refused by the agent, taking no position.
 */
export async function artifactPut(name: string, path: string, options: ArtifactPutOptions = {}): Promise<void> {
  const answer = await send({ verb: 'artifact.put', name, ...(options.contentType ? { contentType: options.contentType } : {}), ...sourceOf(name, path) });
  if (answer.status !== 'execute') {
    await ok(answer);
    return;
  }
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(PART_BYTES);
  const fd = openSync(path, 'r');
  let sent = 0;
  try {
    for (;;) {
      const read = readSync(fd, buffer, 0, PART_BYTES, null);
      if (read === 0) break;
      const part = buffer.subarray(0, read);
      await ok(await send({ verb: 'artifact.write', position: answer.position, data: part.toString('base64') }));
      hash.update(part);
      sent += read;
    }
  } finally {
    closeSync(fd);
  }
  await ok(await send({ verb: 'artifact.commit', position: answer.position, size: sent, sha256: hash.digest('hex') }));
}

/** The file's size, or why it cannot be read: looked at, not opened, before the agent is asked. */
function sourceOf(name: string, path: string): { size: number } | { unreadable: string } {
  try {
    const stat = statSync(path);
    return stat.isFile() ? { size: stat.size } : { unreadable: `artifactPut ${name}: ${path} is not a file` };
  } catch (error) {
    return { unreadable: `artifactPut ${name}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}` };
  }
}

export interface ArtifactGetOptions {
  /** Where to write it (default: the last part of the name, in the working directory). */
  dest?: string;
  /** Another run of the same project, whose artifact to read. */
  run?: string;
}

interface ArtifactPart {
  size: number;
  sha256: string;
  parts: number;
  data: string;
}

/**
 * Writes the artifact `name` to a file and returns its path. The file appears only once whole and
 * its sha256 checked.
 */
export async function artifactGet(name: string, options: ArtifactGetOptions = {}): Promise<string> {
  const dest = options.dest ?? name.split('/').filter((part) => part !== '' && part !== '.' && part !== '..').pop();
  if (!dest) throw new ScriptError('usage', `artifactGet: '${name}' names no file to write to; give a dest`, 2);
  const request: Request = { verb: 'artifact.get', name, part: 0, ...(options.run === undefined ? {} : { run: options.run }) };
  const partial = `${dest}.spool-partial`;
  const hash = createHash('sha256');
  let size = 0;
  const fd = openSync(partial, 'w');
  try {
    let first: ArtifactPart | null = null;
    for (let part = 0; first === null || part < first.parts; part++) {
      const value = (await ok(await send({ ...request, part }))).value as ArtifactPart;
      first ??= value;
      const bytes = Buffer.from(value.data, 'base64');
      writeSync(fd, bytes);
      hash.update(bytes);
      size += bytes.length;
    }
    closeSync(fd);
    const sha256 = hash.digest('hex');
    if (size !== first.size || sha256 !== first.sha256) {
      throw new ScriptError('internal', `artifactGet: '${name}' arrived as ${size} bytes, not the ${first.size} bytes it was stored as`, 1);
    }
    renameSync(partial, dest);
    return dest;
  } finally {
    try {
      closeSync(fd);
    } catch {
      // closed already
    }
    if (existsSync(partial)) rmSync(partial, { force: true });
  }
}

export interface ArtifactInfo {
  name: string;
  size: number;
  sha256: string;
  contentType: string;
  createdAt: string;
}

/** This run's artifacts (or another run's of the same project). */
export async function artifactList(options: { run?: string } = {}): Promise<ArtifactInfo[]> {
  const answer = await ok(await send({ verb: 'artifact.list', ...(options.run === undefined ? {} : { run: options.run }), json: true }));
  return JSON.parse(answer.stdout ?? '[]') as ArtifactInfo[];
}
