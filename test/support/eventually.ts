type Falsy = false | 0 | '' | null | undefined;

/**
 * Polls `probe` until it answers something truthy, and answers that; fails after timeoutMs saying
 * what it waited for and the probe's last error. A probe that throws is tried again.
 */
export async function eventually<T>(what: string, probe: () => Promise<T | Falsy>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
