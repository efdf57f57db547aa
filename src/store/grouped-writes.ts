/**
 * Writes from concurrent callers sent together, a group commit: the first write goes at once; while
 * it is in flight the next ones wait, then go as one statement. Under load (many passes recording
 * steps) the database commits once for many entries; alone, a write waits for nothing.
 *
 * If a group's write fails, each input is written alone, so one bad input fails only its own caller.
 */
export class GroupedWrites<In, Out> {
  private readonly waiting: { input: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  private writing = false;

  /**
   * `write` answers each input's output in order. `weight` says how much of `limit` an input takes
   * (a statement's parameters are bounded): a group holds inputs up to `limit`, always at least one.
   */
  constructor(
    private readonly write: (inputs: In[]) => Promise<Out[]>,
    private readonly weight: (input: In) => number,
    private readonly limit: number,
  ) {}

  add(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.waiting.length > 0) {
      const group = this.nextGroup();
      try {
        const outs = await this.write(group.map((w) => w.input));
        group.forEach((w, i) => w.resolve(outs[i] as Out));
      } catch (error) {
        if (group.length === 1) group[0]!.reject(error);
        else await Promise.all(group.map((w) => this.write([w.input]).then(([out]) => w.resolve(out as Out), w.reject)));
      }
    }
    this.writing = false;
  }

  private nextGroup(): typeof this.waiting {
    let taken = 0;
    let count = 0;
    while (count < this.waiting.length && (count === 0 || taken + this.weight(this.waiting[count]!.input) <= this.limit)) {
      taken += this.weight(this.waiting[count]!.input);
      count++;
    }
    return this.waiting.splice(0, count);
  }
}
