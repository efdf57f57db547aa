/**
 * `fn` with its answers kept for `ms` per key: a pass makes many calls with one token, and asking
 * the API server about that token on each would put a round trip on every durable call. An answer
 * `keep` refuses is not kept: it may change any moment (a warm pod about to be assigned its pass).
 */
export function cachedFor<T>(ms: number, fn: (key: string) => Promise<T>, keep: (value: T) => boolean = () => true): Cached<T> {
  const cache = new Map<string, { value: T; until: number }>();
  const remember = (key: string, value: T, at: number): void => {
    // Tokens rotate: an unbounded map would only grow.
    if (cache.size > 10_000) cache.clear();
    cache.set(key, { value, until: at + ms });
  };
  const cached = async (key: string): Promise<T> => {
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = await fn(key);
    if (keep(value)) remember(key, value, now);
    return value;
  };
  return Object.assign(cached, { remember });
}

/** A function whose answers are kept a while; `remember` keeps one learnt another way, as of `at` (ms). */
export type Cached<T> = ((key: string) => Promise<T>) & { remember(key: string, value: T, at: number): void };
