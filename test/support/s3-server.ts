import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { S3Location } from '../../src/store/artifacts/s3/s3-blobs.js';

/** A real S3-compatible server on loopback: versitygw over a temporary directory (hack/build-s3-server.sh). */
export interface TestS3 {
  endpoint: string;
  /** A bucket made for this server; objects are files under `dir/bucket`. */
  bucket: string;
  dir: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  location(prefix: string): S3Location;
  /** Stops the server (storage down) and starts it again on the same port and files. */
  stopServing(): Promise<void>;
  serveAgain(): Promise<void>;
  stop(): Promise<void>;
}

const repo = resolve(import.meta.dirname, '..', '..');

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`versitygw exited (${child.exitCode}): ${log()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`);
      await response.arrayBuffer();
      return; // any answer (403 for an unsigned request) means it serves
    } catch {
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  throw new Error(`versitygw did not listen on 127.0.0.1:${port} in 30 s: ${log()}`);
}

/** Starts versitygw for one test file (beforeAll; `stop` in afterAll). Builds it once (cached) when missing. */
export async function startS3(): Promise<TestS3> {
  const binary = execFileSync('bash', [join(repo, 'hack', 'build-s3-server.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'spool-s3-'));
  const bucket = 'spool-test';
  // The posix backend serves each top-level directory as a bucket.
  mkdirSync(join(dir, bucket));
  const port = await freePort();
  const credentials = { accessKeyId: 'spooltest', secretAccessKey: 'spooltest-secret-key' };
  let child: ChildProcess | undefined;
  let output = '';
  const serve = async (): Promise<void> => {
    output = '';
    child = spawn(
      binary,
      [
        '--access',
        credentials.accessKeyId,
        '--secret',
        credentials.secretAccessKey,
        '--port',
        `127.0.0.1:${port}`,
        '--quiet',
        'posix',
        dir,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitForPort(port, child, () => output);
  };
  const stopServing = async (): Promise<void> => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((done) => running.once('exit', done));
    running.kill('SIGTERM');
    await exited;
  };
  await serve();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    dir,
    credentials,
    location: (prefix) => ({ bucket, prefix, endpoint, region: 'us-east-1', credentials }),
    stopServing,
    serveAgain: serve,
    async stop() {
      await stopServing();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
