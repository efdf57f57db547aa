import type { OkAnswer } from './protocol.js';

/**
 * A step's output is bytes (docs/protocol.md): a NUL or bytes that are not UTF-8 cannot ride in a
 * JSON string, so they travel as `stdoutBase64`. The same rule as the engine's output-bytes.ts,
 * copied because the SDK ships alone.
 */
const strict = new TextDecoder('utf-8', { fatal: true });

/** Whether bytes are text that JSON and PostgreSQL carry as they are: valid UTF-8 without NUL. */
function isPlainText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The output as a `done` request carries it: `stdout` when plain text, else `stdoutBase64`. */
export function outputField(bytes: Buffer): { stdout: string } | { stdoutBase64: string } {
  return isPlainText(bytes) ? { stdout: bytes.toString('utf8') } : { stdoutBase64: bytes.toString('base64') };
}

/** The exact bytes an answer reports: `stdoutBase64` decoded, or `stdout`'s UTF-8. */
export function outputOf(answer: OkAnswer): Buffer {
  return answer.stdoutBase64 !== undefined ? Buffer.from(answer.stdoutBase64, 'base64') : Buffer.from(answer.stdout ?? '', 'utf8');
}
