import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  reload: () => void;
}

/**
 * Loads data, and again every `everyMs` while `live` holds and the tab is visible (the API has no
 * push; a poll of one page is cheap). A failed poll keeps the last data and shows the error; a
 * 404 ends the polling.
 * `deps` are strings (ids, queries): what was loaded for others is never shown, not even for the
 * one render between a filter's change and the reload it starts.
 */
export function usePoll<T>(load: () => Promise<T>, deps: string[], everyMs: number, live: (data: T | undefined) => boolean): Loaded<T> {
  const key = deps.join('\0');
  const [loaded, setLoaded] = useState<{ key: string; data?: T; error?: ApiError }>({ key });
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);

  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    let last: T | undefined;
    let missing = false;
    const run = async () => {
      try {
        const value = await load();
        if (stopped) return;
        last = value;
        setLoaded({ key, data: value });
      } catch (caught) {
        if (stopped) return;
        const error = caught instanceof ApiError ? caught : new ApiError(0, 'client', String(caught));
        // What is not there (404) does not come back by asking again: the page stops polling.
        missing = error.status === 404;
        setLoaded((before) => ({ key, data: before.key === key ? before.data : undefined, error }));
      }
      if (!stopped && !missing && live(last)) timer = window.setTimeout(() => void whenVisible(), everyMs);
    };
    const whenVisible = async () => {
      if (document.hidden) {
        document.addEventListener('visibilitychange', () => void run(), { once: true });
        return;
      }
      await run();
    };
    void run();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [key, tick]);

  const current = loaded.key === key ? loaded : { key };
  return { data: current.data, error: current.error, reload };
}

/** Re-renders every `ms`, for "3 min ago" and running durations. */
export function useNow(ms = 5000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), ms);
    return () => window.clearInterval(timer);
  }, [ms]);
  return now;
}
