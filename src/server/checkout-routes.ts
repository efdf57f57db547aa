import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { maxCheckoutBytes } from '../engine/limits.js';
import type { ServerContext } from './context.js';
import { CheckoutTooBig, storeCheckout } from './checkout-store.js';
import { HttpError, badRequest } from './http-error.js';

/**
 * `POST /v1/checkouts`: a checkout bundle (`spool submit FILE --with DIR`), a tar archive as the
 * raw request body, streamed into the blob backend; `POST /v1/runs` then names it in `checkout`.
 * Served only where requests are not authorized per person (`spool dev` on loopback): the
 * operator does not take bundles yet (docs/artifacts.md).
 */
export function checkoutRoutes(ctx: ServerContext): Router {
  const router = Router();
  if (ctx.authorize) return router;
  router.post('/', async (req, res) => {
    if (req.get('content-type') !== 'application/x-tar') throw badRequest('a checkout is a tar archive: send it with content-type application/x-tar');
    const id = randomUUID();
    try {
      const stored = await storeCheckout(ctx.store, `checkout-upload:${id}`, `checkout-upload/${id}/`, req, maxCheckoutBytes());
      res.status(201).json({ checkout: id, size: stored.size, sha256: stored.sha256 });
    } catch (error) {
      if (error instanceof CheckoutTooBig) throw new HttpError(413, 'too_large', error.message);
      throw error;
    }
  });
  return router;
}
