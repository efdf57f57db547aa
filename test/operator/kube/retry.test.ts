import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { isTransient, retryTransient } from '../../../src/operator/kube/retry.js';

const status = (code: number): ApiException<string> => new ApiException(code, `HTTP-Code: ${code}`, '', {});
const reset = (): Error => Object.assign(new Error('request failed, reason: read ECONNRESET'), { name: 'FetchError' });

describe('retrying what a restarting API server fails', () => {
  it('given answers of "not now" or no answer, then they are transient; a refusal of the request itself is not', () => {
    for (const error of [status(500), status(503), status(429), status(403), reset()]) expect(isTransient(error)).toBe(true);
    for (const error of [status(400), status(404), status(422), new TypeError('x is undefined')]) expect(isTransient(error)).toBe(false);
  });

  it('given a call reset twice, then the third try answers; given a 422, then it is thrown at once', async () => {
    let calls = 0;
    const answer = await retryTransient(() => (++calls < 3 ? Promise.reject(reset()) : Promise.resolve('created')), new AbortController().signal);
    expect([answer, calls]).toEqual(['created', 3]);

    calls = 0;
    await expect(retryTransient(() => (++calls, Promise.reject(status(422))), new AbortController().signal)).rejects.toThrow('HTTP-Code: 422');
    expect(calls).toBe(1);
  });

  it('given the time spent, then the last error is thrown', async () => {
    await expect(retryTransient(() => Promise.reject(reset()), new AbortController().signal, 300)).rejects.toThrow('ECONNRESET');
  });
});
