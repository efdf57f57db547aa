import { readFileSync } from 'node:fs';
import { UsageError } from './errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A script or pipeline file as the text Hyperspool keeps (a PostgreSQL text column, a Kubernetes
 * string). A file that is not UTF-8 is refused, not rewritten: decoding it leniently would store
 * U+FFFD in place of its bytes, and the script that ran would not be the file.
 */
export function readTextFile(file: string): string {
  const bytes = readFileSync(file);
  try {
    return utf8.decode(bytes);
  } catch {
    throw new UsageError(notUtf8(file, bytes));
  }
}

/** The refusal, naming the line of the first byte that is not UTF-8 (the native client says the same). */
export function notUtf8(file: string, bytes: Uint8Array): string {
  const line = lineOfFirstInvalidByte(bytes);
  return `${file} is not UTF-8 text (line ${line}); Hyperspool runs a script as the text it keeps, so save the file as UTF-8`;
}

function lineOfFirstInvalidByte(bytes: Uint8Array): number {
  let line = 1;
  for (let i = 0; i < bytes.length;) {
    const size = sequenceSize(bytes, i);
    if (size === 0) return line;
    if (bytes[i] === 0x0a) line += 1;
    i += size;
  }
  return line;
}

/** The length of the well-formed UTF-8 sequence at i (RFC 3629: no overlongs, no surrogates), or 0. */
function sequenceSize(bytes: Uint8Array, i: number): number {
  const first = bytes[i] ?? 0;
  if (first < 0x80) return 1;
  const cont = (at: number, low = 0x80, high = 0xbf): boolean => {
    const byte = bytes[i + at];
    return byte !== undefined && byte >= low && byte <= high;
  };
  if (first >= 0xc2 && first <= 0xdf) return cont(1) ? 2 : 0;
  if (first >= 0xe0 && first <= 0xef) {
    const [low, high] = first === 0xe0 ? [0xa0, 0xbf] : first === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, low, high) && cont(2) ? 3 : 0;
  }
  if (first >= 0xf0 && first <= 0xf4) {
    const [low, high] = first === 0xf0 ? [0x90, 0xbf] : first === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, low, high) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}
