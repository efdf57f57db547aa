/**
 * The checkout bundle's format: a POSIX ustar archive of regular files (what `tar -x` and Go's
 * archive/tar read). Written and read in blocks, so neither side holds the whole archive.
 */
export const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** Splits a path into ustar's name (100 bytes) and prefix (155 bytes), or null when it cannot fit. */
function splitPath(path: string): { name: string; prefix: string } | null {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1)) {
    const prefix = path.slice(0, at);
    const name = path.slice(at + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { name, prefix };
  }
  return null;
}

export function fitsUstar(path: string): boolean {
  return splitPath(path) !== null;
}

/** The 512-byte header of a regular file (mtime 0: a bundle of the same files is the same bytes). */
export function fileHeader(path: string, size: number, executable: boolean): Buffer {
  const split = splitPath(path);
  if (!split) throw new Error(`${path}: too long a path for a checkout bundle`);
  const header = Buffer.alloc(BLOCK);
  header.write(split.name, 0, 100, 'utf8');
  header.write(octal(executable ? 0o755 : 0o644, 8), 100, 'ascii');
  header.write(octal(0, 8), 108, 'ascii');
  header.write(octal(0, 8), 116, 'ascii');
  header.write(octal(size, 12), 124, 'ascii');
  header.write(octal(0, 12), 136, 'ascii');
  header.write('        ', 148, 'ascii');
  header.write('0', 156, 'ascii');
  header.write('ustar\0', 257, 'ascii');
  header.write('00', 263, 'ascii');
  header.write(split.prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return header;
}

/** Zeros that pad a file's data to a whole block. */
export function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** Two zero blocks end an archive. */
export const END = Buffer.alloc(2 * BLOCK);

export interface UstarEntry {
  path: string;
  size: number;
  executable: boolean;
}

/**
 * Reads an archive pushed in chunks of any size: `onEntry` for each file's header, `onData` for
 * its bytes as they come, `onEnd` when a file is complete. Only regular files and directories.
 */
export class UstarReader {
  private held: Buffer = Buffer.alloc(0);
  private entry: UstarEntry | null = null;
  private remaining = 0;
  private skip = 0;
  ended = false;

  constructor(
    private readonly onEntry: (entry: UstarEntry) => void,
    private readonly onData: (bytes: Buffer) => void,
    private readonly onEnd: () => void,
  ) {}

  push(chunk: Buffer): void {
    this.held = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    for (;;) {
      if (this.ended) return;
      if (this.entry) {
        if (this.remaining > 0) {
          if (this.held.length === 0) return;
          const take = Math.min(this.remaining, this.held.length);
          this.onData(this.held.subarray(0, take));
          this.held = this.held.subarray(take);
          this.remaining -= take;
          if (this.remaining > 0) return;
        }
        this.onEnd();
        this.entry = null;
        continue;
      }
      if (this.skip > 0) {
        const take = Math.min(this.skip, this.held.length);
        this.held = this.held.subarray(take);
        this.skip -= take;
        if (this.skip > 0) return;
      }
      if (this.held.length < BLOCK) return;
      const header = this.held.subarray(0, BLOCK);
      this.held = this.held.subarray(BLOCK);
      if (header.every((byte) => byte === 0)) {
        this.ended = true;
        return;
      }
      const text = (from: number, length: number): string => header.toString('utf8', from, from + length).replace(/\0.*$/s, '');
      if (!checksumHolds(header)) throw new Error('a header of the checkout bundle is damaged (its checksum does not hold): it is not a tar archive spool wrote');
      const sizeText = text(124, 12).trim() || '0';
      if (!/^[0-7]{1,11}$/.test(sizeText)) throw new Error(`an entry of the checkout bundle has a size that is not a number ('${sizeText}')`);
      const size = Number.parseInt(sizeText, 8);
      const prefix = text(345, 155);
      const name = text(0, 100);
      const type = text(156, 1) || '0';
      const mode = Number.parseInt(text(100, 8).trim() || '644', 8);
      if (type !== '0' && type !== '5') throw new Error(`the checkout bundle holds an entry of type '${type}', which is not a file`);
      const path = safePath(prefix ? `${prefix}/${name}` : name);
      if (type === '0') {
        this.entry = { path, size, executable: (mode & 0o111) !== 0 };
        this.remaining = size;
        this.onEntry(this.entry);
      }
      this.skip = (BLOCK - (size % BLOCK)) % BLOCK;
      if (type === '5') this.skip += size;
    }
  }
}

/** A header's checksum: the sum of its bytes with the checksum field read as spaces. */
function checksumHolds(header: Buffer): boolean {
  const recorded = Number.parseInt(header.toString('ascii', 148, 156).replace(/[\0 ]+$/, '').trim(), 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : (header[i] ?? 0);
  return recorded === sum;
}

/** A path that stays inside the directory it is unpacked into: relative, no `..`, not empty. */
function safePath(path: string): string {
  const parts = path.split('/').filter((part) => part !== '' && part !== '.');
  if (path.startsWith('/') || parts.length === 0 || parts.includes('..')) {
    throw new Error(`the checkout bundle holds the path '${path}', which would land outside its directory`);
  }
  return path;
}
