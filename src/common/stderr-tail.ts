import { displayText } from './output-bytes.js';

/** How much of a failed command's stderr its result keeps (the clients cut it; the agent checks it). */
export const STDERR_TAIL_BYTES = 1024;

/**
 * The end of what a command wrote to stderr, as text: kept beside a failed step's result
 * (DoneRequest.stderrTail) and a failed activity attempt's (ActivityResult.stderrTail), so the run
 * page, `spool status` and a Run's message can say why it failed.
 */
export class StderrTail {
  private bytes = Buffer.alloc(0);
  private cut = false;

  add(chunk: Buffer): void {
    const all = Buffer.concat([this.bytes, chunk]);
    this.cut ||= all.length > STDERR_TAIL_BYTES;
    this.bytes = all.subarray(Math.max(0, all.length - STDERR_TAIL_BYTES));
  }

  /**
   * NUL and bytes that are not UTF-8 become U+FFFD (a jsonb string holds neither); a line the cut
   * began in the middle of is dropped.
   */
  text(): string {
    let text = displayText(this.bytes);
    if (this.cut && text.includes('\n')) text = text.slice(text.indexOf('\n') + 1);
    return text.trim();
  }

  /** As a result's field: none when stderr said nothing. */
  field(): { stderrTail?: string } {
    const text = this.text();
    return text ? { stderrTail: text } : {};
  }
}

/** A message of spool's own as a tail, cut as one is: a program's name in it may be longer than a tail keeps. */
export function tailOf(message: string): string {
  const tail = new StderrTail();
  tail.add(Buffer.from(message));
  return tail.text();
}
