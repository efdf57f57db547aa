/** setTimeout fires at once past 2^31 - 1 ms (24.8 days): a later time waits in steps of this. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Keys each due at a time of its own (the work queue's `addAfter`), behind one timer: the earliest
 * time of each key, in a binary heap by time. A timer per key cost some 300 bytes a key, and a
 * leader with 80,000 Runs asleep holds 80,000 of them (docs/scaling.md); an entry here is one
 * small object and a Map entry.
 */
export class DelayedKeys {
  /** Per key, the time it is due (the earliest asked). */
  private readonly dueAt = new Map<string, number>();
  /** Min-heap by `at`; an entry whose key is now due at another time is stale, and skipped. */
  private heap: { at: number; key: string }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(private readonly onDue: (key: string) => void) {}

  get size(): number {
    return this.dueAt.size;
  }

  /** `key` is due `ms` from now, unless it is due sooner already. */
  add(key: string, ms: number): void {
    const at = Date.now() + ms;
    const pending = this.dueAt.get(key);
    if (pending !== undefined && pending <= at) return;
    this.dueAt.set(key, at);
    this.push({ at, key });
    // Stale entries (keys asked again sooner) are dropped once they outnumber the live ones.
    if (this.heap.length > 2 * this.dueAt.size + 1024) this.rebuild();
    this.arm();
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.dueAt.clear();
    this.heap = [];
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    const due: string[] = [];
    while (this.heap.length > 0 && (this.heap[0]?.at ?? 0) <= now) {
      const { at, key } = this.pop();
      if (this.dueAt.get(key) !== at) continue;
      this.dueAt.delete(key);
      due.push(key);
    }
    this.arm();
    for (const key of due) this.onDue(key);
  }

  /** The timer is set for the earliest entry. */
  private arm(): void {
    const next = this.heap[0];
    if (!next || next.at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next.at;
    this.timer = setTimeout(() => this.fire(), Math.min(MAX_TIMER_MS, Math.max(0, next.at - Date.now())));
  }

  private rebuild(): void {
    this.heap = [];
    for (const [key, at] of this.dueAt) this.push({ at, key });
  }

  private push(entry: { at: number; key: string }): void {
    const heap = this.heap;
    let at = heap.push(entry) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = heap[parent] as { at: number; key: string };
      if (above.at <= entry.at) break;
      heap[at] = above;
      at = parent;
    }
    heap[at] = entry;
  }

  private pop(): { at: number; key: string } {
    const heap = this.heap;
    const top = heap[0] as { at: number; key: string };
    const last = heap.pop() as { at: number; key: string };
    if (heap.length === 0) return top;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && (heap[right] as { at: number }).at < (heap[left] as { at: number }).at ? right : left;
      const below = heap[child] as { at: number; key: string };
      if (below.at >= last.at) break;
      heap[at] = below;
      at = child;
    }
    heap[at] = last;
    return top;
  }
}
