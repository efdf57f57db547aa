import { accessSync, constants } from 'node:fs';
import { delimiter, extname, join } from 'node:path';
import { UsageError } from './errors.js';

/** The interpreter each script extension picks; scripts in bash run with errexit and nounset. */
const BY_EXTENSION: Record<string, string[]> = {
  '.sh': ['bash', '-eu'],
  '.bash': ['bash', '-eu'],
  '.py': ['python3'],
  '.mjs': ['node'],
  '.js': ['node'],
  '.cjs': ['node'],
};

export const SUPPORTED_EXTENSIONS = Object.keys(BY_EXTENSION);

/** The interpreter's command line (without the script) for a file name. */
export function interpreterFor(file: string): string[] {
  const command = BY_EXTENSION[extname(file).toLowerCase()];
  if (!command) {
    throw new UsageError(
      `cannot tell how to run ${file}: its extension picks the interpreter (${SUPPORTED_EXTENSIONS.join(', ')})`,
    );
  }
  return command;
}

export function findOnPath(command: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Refuses a script whose interpreter is not installed, before anything is recorded. */
export function checkInterpreter(interpreter: string[], file: string): void {
  const [command] = interpreter;
  if (command && !findOnPath(command)) {
    throw new UsageError(`${file} needs ${command}, which is not installed here (not found on PATH)`);
  }
}
