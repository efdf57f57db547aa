import type { LogLine } from '../../api/responses.js';
/** A run's log as `spool logs` prints it: the text as the script wrote it, or annotated. */
/** A piece of a run's log as the API answers it: `base64`, where it is there, is printed as it is unless with timestamps. */
export type LogChunk = LogLine;

export interface LogOptions {
  /** Each line starts with the time its text was logged. */
  timestamps?: boolean;
  /** A line where each pass begins: a replay prints the lines between calls again, and this says why. */
  passes?: boolean;
}

/**
 * Turns chunks (which need not end at line ends) into what to print, carrying across calls whether
 * the next text starts a line and which pass was last, so `--follow` prints the same as a one-off.
 */
export class LogPrinter {
  private atLineStart = true;
  private pass: number | null = null;

  constructor(private readonly options: LogOptions) {}

  format(chunk: LogChunk): string | Buffer {
    let out = '';
    if (this.options.passes && chunk.pass !== this.pass) {
      if (!this.atLineStart) out += '\n';
      out += `--- pass ${chunk.pass} ---\n`;
      this.atLineStart = true;
    }
    this.pass = chunk.pass;
    if (!this.options.timestamps && chunk.base64 !== undefined) {
      this.atLineStart = chunk.text === '' ? this.atLineStart : chunk.text.endsWith('\n');
      return Buffer.concat([Buffer.from(out), Buffer.from(chunk.base64, 'base64')]);
    }
    if (!this.options.timestamps) {
      out += chunk.text;
    } else {
      for (const piece of chunk.text.split(/(?<=\n)/)) {
        if (this.atLineStart && piece !== '') out += `${chunk.at} `;
        out += piece;
        this.atLineStart = piece.endsWith('\n');
      }
      return out;
    }
    if (chunk.text !== '') this.atLineStart = chunk.text.endsWith('\n');
    return out;
  }
}
