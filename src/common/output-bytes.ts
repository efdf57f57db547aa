/**
 * Output is bytes (DESIGN §9): a script may print NUL or text that is not UTF-8, and what it
 * printed must come back as it went. JSON strings and PostgreSQL's text cannot hold such bytes,
 * so they travel and are kept as base64 beside a text a person can read.
 */
const strict = new TextDecoder('utf-8', { fatal: true });

/** Whether bytes are text that JSON and PostgreSQL carry as they are: valid UTF-8 without NUL. */
export function isPlainText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** What a person reads of bytes: UTF-8, with a NUL or a byte that is not text shown as U+FFFD. */
export function displayText(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('utf8').replaceAll('\u0000', '\ufffd');
}

/** Plain text as `{ [field]: text }`, anything else as `{ [field + 'Base64']: base64 }`. */
export function bytesField<K extends string>(field: K, bytes: Uint8Array): { [P in K]: string } | { [P in `${K}Base64`]: string } {
  return (isPlainText(bytes) ? { [field]: Buffer.from(bytes).toString('utf8') } : { [`${field}Base64`]: Buffer.from(bytes).toString('base64') }) as
    | { [P in K]: string }
    | { [P in `${K}Base64`]: string };
}

/**
 * Splits a stream of bytes into pieces that never cut a UTF-8 character in two (a piece that is
 * text stays text), holding back at most the 3 bytes of a character not yet whole.
 */
export class Utf8Pieces {
  private held: Buffer = Buffer.alloc(0);

  write(chunk: Buffer): Buffer {
    const bytes = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    const cut = bytes.length - incompleteTail(bytes);
    this.held = Buffer.from(bytes.subarray(cut));
    return bytes.subarray(0, cut);
  }

  end(): Buffer {
    const rest = this.held;
    this.held = Buffer.alloc(0);
    return rest;
  }
}

/** How many bytes at the end start a UTF-8 character that needs more bytes than are there. */
function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back for the lead
    const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needs > back ? back : 0;
  }
  return 0;
}
