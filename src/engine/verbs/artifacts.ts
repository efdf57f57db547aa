import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import { DeterminismError, SpoolError, UsageError } from '../../common/errors.js';
import type { ArtifactRecord } from '../../store/artifacts/types.js';
import type { PassState as Pass, Reached } from '../pass-state.js';
import { CHECKOUT_ARTIFACT, RESERVED_ARTIFACT_PREFIX } from '../protocol.js';
import type {
  Answer,
  ArtifactCommitRequest,
  ArtifactGetRequest,
  ArtifactListRequest,
  ArtifactPart,
  ArtifactPutRequest,
  ArtifactWriteRequest,
} from '../protocol.js';
import { artifactLimits, checkArtifactSize, type ArtifactLimits } from '../limits.js';
import type { Upload } from '../uploads.js';
import { OK } from './answers.js';

/** A content type from the name when the script gave none: enough for a browser to show or save it. */
const TYPES: Record<string, string> = {
  '.txt': 'text/plain', '.log': 'text/plain', '.md': 'text/markdown', '.csv': 'text/csv', '.html': 'text/html',
  '.json': 'application/json', '.xml': 'application/xml', '.yaml': 'application/yaml', '.yml': 'application/yaml',
  '.tar': 'application/x-tar', '.gz': 'application/gzip', '.tgz': 'application/gzip', '.zip': 'application/zip',
  '.pdf': 'application/pdf', '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.svg': 'image/svg+xml',
};
const contentTypeOf = (name: string): string => TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';

const limitsOf = (pass: Pass): ArtifactLimits => pass.host.artifactLimits ?? artifactLimits();

/**
 * `artifact put`: a recorded call. On a replay it answers from the journal and no byte is sent (the
 * client opens its file or stdin only when told to execute: a new pod has none of the last pass's
 * files); otherwise it takes its position and answers execute, the client sends the parts, and
 * `commit` records the artifact. Names are unique within a run: an artifact is what its put stored.
 *
 * Refusals are decided before the journal has a say, the same way on every pass (DESIGN §9): a
 * file the client cannot read, a size over a limit. One only found while the bytes arrive (stdin
 * over a limit) is found again on the next pass too: when the journal holds another call at this
 * position, the bytes are counted without taking the position, and only a put that turns out not to
 * be refused is the determinism error it would otherwise be.
 */
export async function artifactPut(pass: Pass, request: ArtifactPutRequest): Promise<Answer> {
  const { run } = pass;
  const limits = limitsOf(pass);
  if (request.name.startsWith(RESERVED_ARTIFACT_PREFIX)) {
    pass.refuse(`artifact names starting with '${RESERVED_ARTIFACT_PREFIX}' are Hyperspool's own ('${request.name}'); choose another name`);
  }
  // Its call and result are recorded together, at its commit.
  if (pass.recordedNext('artifact.put', request.name)) {
    pass.take(pass.peek('artifact.put', request.name));
    return { status: 'ok', exitCode: 0, replayed: true };
  }
  if (request.unreadable !== undefined) pass.refuse(request.unreadable);
  const runTotal = await pass.store.artifacts.totalBytes(run.id);
  if (request.size !== undefined) checkArtifactSize(request.name, request.size, runTotal, limits);
  const refuseTaken = (position: number): void => {
    const other = pass.findRecorded(['artifact.put'], request.name, position);
    if (other) {
      pass.refuse(`this run already has an artifact '${request.name}' (call ${other.position + 1}); artifact names are unique within a run`);
    }
  };
  let peeked: Reached;
  try {
    peeked = pass.peek('artifact.put', request.name, refuseTaken);
  } catch (error) {
    if (!(error instanceof DeterminismError) || request.size !== undefined) throw error;
    return probe(pass, request, runTotal, error.message);
  }
  const reached = pass.take(peeked);
  const blobKey = `${run.id}/${reached.position}/${run.passes}/`;
  // Parts a pass that died half-way through this put left behind.
  await pass.store.artifacts.blobs.deletePrefix(`${run.id}/${reached.position}/`);
  pass.uploads.set(reached.position, upload(reached.position, reached.occurrence, request, blobKey, runTotal));
  return { status: 'execute', position: reached.position };
}

/**
 * A put of unknown size (stdin) where the journal holds another call: its bytes are counted, not
 * kept, and it takes no position. Over a limit it is refused as on the pass that first met it;
 * otherwise its commit is the determinism error.
 */
function probe(pass: Pass, request: ArtifactPutRequest, runTotal: number, divergence: string): Answer {
  const position = pass.nextPosition;
  pass.uploads.set(position, { ...upload(position, 0, request, null, runTotal), divergence });
  return { status: 'execute', position };
}

function upload(position: number, occurrence: number, request: ArtifactPutRequest, blobKey: string | null, runTotal: number): Upload {
  return {
    position,
    occurrence,
    name: request.name,
    contentType: request.contentType ?? contentTypeOf(request.name),
    blobKey,
    hash: createHash('sha256'),
    size: 0,
    parts: 0,
    runTotal,
    divergence: null,
  };
}

function uploadAt(pass: Pass, position: number): Upload {
  const upload = pass.uploads.get(position);
  if (!upload) pass.refuse(`no artifact put at position ${position} is waiting for its bytes`);
  return upload;
}

/** Drops an upload that failed: its parts go, its position is given back if nothing came after it. */
async function abandon(pass: Pass, upload: Upload): Promise<void> {
  pass.uploads.delete(upload.position);
  if (upload.blobKey === null) return;
  pass.untake(upload.position, 'artifact.put', upload.name, upload.occurrence);
  await pass.store.artifacts.blobs.deletePrefix(upload.blobKey);
}

export async function artifactWrite(pass: Pass, request: ArtifactWriteRequest): Promise<Answer> {
  const upload = uploadAt(pass, request.position);
  const bytes = Buffer.from(request.data, 'base64');
  try {
    checkArtifactSize(upload.name, upload.size + bytes.length, upload.runTotal, limitsOf(pass));
  } catch (error) {
    await abandon(pass, upload);
    throw error;
  }
  if (upload.blobKey !== null) await pass.store.artifacts.blobs.writePart(upload.blobKey, upload.parts, bytes);
  upload.hash.update(bytes);
  upload.size += bytes.length;
  upload.parts += 1;
  return OK;
}

/** Records the artifact once its bytes are all here and are what the client read (size and sha256). */
export async function artifactCommit(pass: Pass, request: ArtifactCommitRequest): Promise<Answer> {
  const upload = uploadAt(pass, request.position);
  if (upload.divergence !== null || upload.blobKey === null) {
    await abandon(pass, upload);
    throw new DeterminismError(upload.divergence ?? 'an artifact put that was never asked for');
  }
  const { blobKey } = upload;
  const sha256 = upload.hash.copy().digest('hex');
  if (request.size !== upload.size || request.sha256 !== sha256) {
    await abandon(pass, upload);
    throw new SpoolError(
      'internal',
      `artifact '${upload.name}': the client read ${request.size} bytes (sha256 ${request.sha256}) but ${upload.size} ` +
        `arrived (sha256 ${sha256}); nothing was stored, put it again`,
    );
  }
  pass.uploads.delete(upload.position);
  const reached: Reached = {
    position: upload.position,
    occurrence: upload.occurrence,
    verb: 'artifact.put',
    name: upload.name,
    call: null,
    result: null,
  };
  const { run } = pass;
  const data = { size: upload.size, sha256, contentType: upload.contentType };
  await pass.store.transaction(async (tx) => {
    await pass.record(reached, 'call', {}, tx);
    await pass.record(reached, 'result', data, tx);
    await tx.artifacts.record({
      runId: run.id,
      name: upload.name,
      position: upload.position,
      ...data,
      blobKey,
      parts: upload.parts,
    });
  });
  return OK;
}

/** The run whose artifacts a call reads: this one, or another of the same project. */
async function readableRun(pass: Pass, runId: string | undefined): Promise<string> {
  const { run } = pass;
  if (runId === undefined || runId === run.id) return run.id;
  const other = await pass.store.getRun(runId);
  if (!other) throw new UsageError(`no run '${runId}'`);
  if (other.project !== run.project) {
    throw new UsageError(
      `run ${runId} is in project '${other.project}', and this run (project '${run.project}') may read the artifacts ` +
        `of runs in its own project only`,
    );
  }
  return runId;
}

async function artifactOf(pass: Pass, runId: string, name: string): Promise<ArtifactRecord> {
  const artifact = await pass.store.artifacts.get(runId, name);
  if (artifact) return artifact;
  if (name === CHECKOUT_ARTIFACT) {
    throw new UsageError(
      `${runId === pass.run.id ? 'this run' : `run ${runId}`} has no checkout: start it with 'spool run FILE --with DIR' or 'spool submit FILE --with DIR' ` +
        `to bundle the files beside the script`,
    );
  }
  const names = (await pass.store.artifacts.list(runId)).map((each) => `'${each.name}'`);
  const where = runId === pass.run.id ? 'this run' : `run ${runId}`;
  throw new UsageError(
    `no artifact '${name}' in ${where}` + (names.length ? ` (it has ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', ...' : ''})` : ' (it has none)'),
  );
}

/** `artifact get`: live, not recorded (an artifact never changes); one part per request. */
export async function artifactGet(pass: Pass, request: ArtifactGetRequest): Promise<Answer> {
  const runId = await readableRun(pass, request.run);
  const artifact = await artifactOf(pass, runId, request.name);
  const empty = artifact.parts === 0 && request.part === 0;
  const bytes = empty ? new Uint8Array() : await pass.store.artifacts.blobs.readPart(artifact.blobKey, request.part);
  if (!bytes) {
    throw new UsageError(`artifact '${artifact.name}' has ${artifact.parts} parts; there is no part ${request.part}`);
  }
  const value: ArtifactPart = {
    name: artifact.name,
    size: artifact.size,
    sha256: artifact.sha256,
    contentType: artifact.contentType,
    parts: artifact.parts,
    part: request.part,
    data: Buffer.from(bytes).toString('base64'),
  };
  return { status: 'ok', exitCode: 0, value };
}

/** `artifact list`: a line per artifact (name, size, sha256, content type), or with `json` one JSON array. */
export async function artifactList(pass: Pass, request: ArtifactListRequest): Promise<Answer> {
  const runId = await readableRun(pass, request.run);
  const artifacts = (await pass.store.artifacts.list(runId)).map((each) => ({
    name: each.name,
    size: each.size,
    sha256: each.sha256,
    contentType: each.contentType,
    createdAt: each.createdAt.toISOString(),
  }));
  const stdout = request.json
    ? `${JSON.stringify(artifacts)}\n`
    : artifacts.map((each) => `${each.name}\t${each.size}\t${each.sha256}\t${each.contentType}\n`).join('');
  return { status: 'ok', stdout, exitCode: 0 };
}
