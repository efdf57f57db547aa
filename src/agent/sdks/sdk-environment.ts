import { existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** `from hyperspool import script` resolves here (sdk/python's src layout). */
export const PYTHON_SDK = join(PACKAGE_ROOT, 'sdk', 'python', 'src');
/** Where the build stages the TypeScript SDK (scripts/stage-sdks.mjs), for the resolve hook. */
export const NODE_SDK = join(PACKAGE_ROOT, 'dist', 'sdk', 'node_modules', '@hyperspool', 'sdk');
/**
 * Registers the resolve hook that lets `import ... from '@hyperspool/sdk'` fall back to this
 * package's SDK: the built one, wherever this module runs from (the tests run it from src/).
 */
const RESOLVE_HOOK = join(PACKAGE_ROOT, 'dist', 'agent', 'sdks', 'register-sdk-resolve.js');

const append = (list: string | undefined, entry: string, separator: string = delimiter): string =>
  list ? `${list}${separator}${entry}` : entry;

/** Whether the active virtualenv has its own hyperspool, which must win over the bundled one. */
function virtualenvHasSdk(env: NodeJS.ProcessEnv): boolean {
  const venv = env.VIRTUAL_ENV;
  if (!venv) return false;
  const lib = join(venv, 'lib');
  try {
    return readdirSync(lib).some((python) => existsSync(join(lib, python, 'site-packages', 'hyperspool')));
  } catch {
    return false;
  }
}

/**
 * The SDKs, importable by scripts with no install (the seed's "managed environment"), unless the
 * script's own environment already provides them: a virtualenv's hyperspool, or a node_modules
 * the script resolves from first (the resolve hook is only a fallback).
 */
export function sdkEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const added: Record<string, string> = {};
  if (existsSync(PYTHON_SDK) && !virtualenvHasSdk(env)) added.PYTHONPATH = append(env.PYTHONPATH, PYTHON_SDK);
  // The SDK is ESM, which ignores NODE_PATH: a resolve hook makes `import` (and `import()` from
  // CommonJS) find it when the script's own node_modules does not.
  if (existsSync(join(NODE_SDK, 'package.json')) && existsSync(RESOLVE_HOOK)) {
    added.NODE_OPTIONS = append(env.NODE_OPTIONS, `--import=${pathToFileURL(RESOLVE_HOOK).href}`, ' ');
  }
  return added;
}
