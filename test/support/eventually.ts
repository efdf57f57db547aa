type Falsy = false | 0 | '' | null | undefined;

/**
 * Thrown by a probe that knows the wait can no longer end well (the run it waits for has ended
 * otherwise, the Job it waits on failed): `eventually` fails at once with it rather than retrying
 * until its timeout, so a broken test says why in a second, not in minutes.
 */
export class GaveUp extends Error {
  override name = 'GaveUp';
}

/**
 * Polls `probe` until it answers something truthy, and answers that; fails after timeoutMs saying
 * what it waited for and the probe's last error. A probe that throws is tried again (an API server
 * restarting, a resource not there yet), unless it throws GaveUp.
 */
export async function eventually<T>(what: string, probe: () => Promise<T | Falsy>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      if (error instanceof GaveUp) throw new Error(`gave up waiting for ${what}: ${error.message}`, { cause: error });
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A Run's phases that never change again. */
export const FINAL_PHASES = ['Succeeded', 'Failed', 'Cancelled'];

interface Phased {
  status?: { phase?: string; message?: string };
}

/**
 * Polls `read` until the resource is in `phase` and answers it; fails at once if it reaches a
 * final phase other than that one (a Run that failed will not succeed later), saying its message
 * and whatever `explain` adds (its log, the operator's). As Argo's e2e `ToHavePhase`.
 */
export async function untilPhase<T extends Phased>(
  what: string,
  read: () => Promise<T>,
  phase: string,
  timeoutMs = 60_000,
  { explain = () => Promise.resolve(''), everyMs = 100 }: { explain?: (resource: T) => Promise<string>; everyMs?: number } = {},
): Promise<T> {
  return eventually(
    `${what} ${phase}`,
    async () => {
      const resource = await read();
      const now = resource.status?.phase ?? '';
      if (now === phase) return resource;
      if (FINAL_PHASES.includes(now)) {
        const why = await explain(resource).catch(() => '');
        throw new GaveUp(`it ended ${now}${resource.status?.message ? `: ${resource.status.message}` : ''}${why ? `\n${why}` : ''}`);
      }
      return null;
    },
    timeoutMs,
    everyMs,
  );
}
