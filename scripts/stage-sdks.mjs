#!/usr/bin/env node
/**
 * Stages the built TypeScript SDK as dist/sdk/node_modules/@hyperspool/sdk, a node_modules-shaped
 * directory that scripts get on NODE_PATH (and through the resolve hook for `import`), so
 * `@hyperspool/sdk` resolves with no install. A copy, not a link, so `npm pack` keeps it.
 */
import { cpSync, existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SDK = join(ROOT, 'sdk', 'typescript');
const STAGED = join(ROOT, 'dist', 'sdk', 'node_modules', '@hyperspool', 'sdk');

rmSync(STAGED, { recursive: true, force: true });
if (existsSync(join(SDK, 'dist'))) {
  cpSync(join(SDK, 'package.json'), join(STAGED, 'package.json'));
  cpSync(join(SDK, 'dist'), join(STAGED, 'dist'), { recursive: true });
}
