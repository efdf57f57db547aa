import { gzipSync } from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';

/** Below this a JSON answer goes as it is: compressing would cost more than it saves. */
const MIN_BYTES = 8 * 1024;

/**
 * Large JSON answers gzipped for a client that accepts it: a run's timeline of 500 calls is some
 * 165 KB of JSON and 15 KB gzipped, which is what the run page's bytes are mostly made of.
 */
export function compressJson(req: Request, res: Response, next: NextFunction): void {
  if (!/\bgzip\b/.test(req.get('accept-encoding') ?? '')) return next();
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const text = JSON.stringify(body);
    if (text === undefined || Buffer.byteLength(text) < MIN_BYTES) return json(body);
    res.set({ 'Content-Type': 'application/json; charset=utf-8', 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' });
    return res.send(gzipSync(text, { level: 6 }));
  };
  next();
}
