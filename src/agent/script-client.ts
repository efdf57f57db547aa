import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../common/errors.js';

/**
 * Which `spool` a script finds first on its PATH: the static native client (sdk/go/cmd/spool, a
 * durable call in a few milliseconds) where one is here, else this package's Node client (a Node
 * start-up per call). `SPOOL_CLIENT=node` or `=native` picks one (the tests run both).
 */
export interface ScriptClient {
  kind: 'native' | 'node';
  /** The directory to put first on a script's PATH. */
  dir: string;
  /** Where the binary came from, for `spool doctor`. */
  source: string;
}

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** bin/ of this package: `spool` there is the Node CLI, control verbs and in-script verbs alike. */
export const NODE_CLIENT_DIR = join(PACKAGE_ROOT, 'bin');
export const NODE_CLI = join(NODE_CLIENT_DIR, 'spool');

/** The platform names Node uses (linux-x64, darwin-arm64), as the prebuilt packages are named. */
export const PLATFORM = `${process.platform}-${process.arch}`;

/** Where `npm run build:native` (and the install step) put the binary for this platform. */
export const BUILT_NATIVE = join(PACKAGE_ROOT, 'dist', 'native', PLATFORM, 'spool');
/** An activity attempt's reporter, built beside it (the runner image's copy is what a cluster's attempt pods run). */
export const BUILT_ACTIVITY_REPORTER = join(PACKAGE_ROOT, 'dist', 'native', PLATFORM, 'spool-activity-attempt');

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A release's prebuilt binary: the optional package `@hyperspool/native-<platform>` (the esbuild pattern). */
function prebuilt(): string | null {
  try {
    const manifest = createRequire(import.meta.url).resolve(`@hyperspool/native-${PLATFORM}/package.json`);
    const binary = join(dirname(manifest), 'bin', 'spool');
    return executable(binary) ? binary : null;
  } catch {
    return null;
  }
}

function findNative(): { binary: string; source: string } | null {
  const built = executable(BUILT_NATIVE) ? BUILT_NATIVE : null;
  if (built) return { binary: built, source: 'built from sdk/go by this install' };
  const shipped = prebuilt();
  return shipped ? { binary: shipped, source: `the prebuilt package @hyperspool/native-${PLATFORM}` } : null;
}

/** The native client's binary, whichever client scripts are given; null where there is none. */
export function nativeClientBinary(): string | null {
  return findNative()?.binary ?? null;
}

/** The client scripts get here; a `SPOOL_CLIENT=native` with no native binary is refused, never silently swapped. */
export function scriptClient(choice = process.env.SPOOL_CLIENT): ScriptClient {
  if (choice !== undefined && choice !== '' && choice !== 'native' && choice !== 'node') {
    throw new UsageError(`SPOOL_CLIENT takes 'native' or 'node', not '${choice}'`);
  }
  if (choice === 'node') return { kind: 'node', dir: NODE_CLIENT_DIR, source: 'SPOOL_CLIENT=node' };
  const native = findNative();
  if (native) return { kind: 'native', dir: dirname(native.binary), source: native.source };
  if (choice === 'native') {
    throw new UsageError(`SPOOL_CLIENT=native, but no native client is here for ${PLATFORM}: build it with 'npm run build:native' (needs Go)`);
  }
  return { kind: 'node', dir: NODE_CLIENT_DIR, source: `no native client for ${PLATFORM} (install Go and run 'npm run build:native')` };
}
