import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built SDK, which scripts import (the root `npm run build` builds it). */
export const SDK_DIST = new URL('../dist/index.js', import.meta.url);

/**
 * How a test script imports the SDK: by the built file's absolute URL, so the tests do not depend on
 * how `spool run` and `spool dev` make `@hyperspool/sdk` resolvable for scripts.
 */
export const SDK_IMPORT = SDK_DIST.href;

export function requireBuiltSdk(): void {
  if (!existsSync(fileURLToPath(SDK_DIST))) {
    throw new Error(`${fileURLToPath(SDK_DIST)} is missing: run npm run build first`);
  }
}

/** A script's text with its `@hyperspool/sdk` import pointed at the built SDK. */
export function withSdkImport(script: string): string {
  return script.replaceAll(/from '@hyperspool\/sdk'/g, `from '${SDK_IMPORT}'`);
}
