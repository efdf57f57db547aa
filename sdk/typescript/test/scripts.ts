import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The SDK a script's `import ... from '@hyperspool/sdk'` gets under spool run and spool dev: the
 * root build stages this package's dist there and the pass's resolve hook finds it.
 */
const STAGED = new URL('../../../dist/sdk/node_modules/@hyperspool/sdk/dist/index.js', import.meta.url);

export function requireBuiltSdk(): void {
  if (!existsSync(fileURLToPath(STAGED))) {
    throw new Error(`${fileURLToPath(STAGED)} is missing: run npm run build first`);
  }
}
