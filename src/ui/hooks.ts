import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  reload: () => void;
}

/**
 * Loads data, and again every `everyMs` while `live` holds and the tab is visible (the API has no
 * push; a poll of one page is cheap). A failed poll keeps the last data and shows the error.
 */
export function usePoll<T>(load: () => Promise<T>, deps: unknown[], everyMs: number, live: (data: T | undefined) => boolean): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [tick, setTick] = useState(0);
  const latest = useRef<{ data: T | undefined }>({ data: undefined });
  const reload = useCallback(() => setTick((n) => n + 1), []);

  useEffect(() => {
    latest.current.data = undefined;
    setData(undefined);
    setError(undefined);
  }, deps);

  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    const run = async () => {
      try {
        const value = await load();
        if (stopped) return;
        latest.current.data = value;
        setData(value);
        setError(undefined);
      } catch (caught) {
        if (stopped) return;
        setError(caught instanceof ApiError ? caught : new ApiError(0, 'client', String(caught)));
      }
      if (!stopped && live(latest.current.data)) timer = window.setTimeout(() => void whenVisible(), everyMs);
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
  }, [...deps, tick]);

  return { data, error, reload };
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
