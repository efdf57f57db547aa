import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Router } from 'express';
import { maxCheckoutBytes } from '../engine/limits.js';
import type { ResponseOf } from '../api/responses.js';
import type { ServerContext } from './context.js';
import { CheckoutRefused, CheckoutTooBig, storeCheckout } from './checkout-store.js';
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
      // Not destroyed when the check stops reading: the rest is read off and dropped (discardRest).
      const stored = await storeCheckout(ctx.store, `checkout-upload:${id}`, `checkout-upload/${id}/`, req.iterator({ destroyOnReturn: false }), maxCheckoutBytes());
      res.status(201).json({ checkout: id, size: stored.size, sha256: stored.sha256 } satisfies ResponseOf<'POST /checkouts'>);
    } catch (error) {
      if (error instanceof CheckoutTooBig || error instanceof CheckoutRefused) await discardRest(req);
      if (error instanceof CheckoutTooBig) throw new HttpError(413, 'too_large', error.message);
      if (error instanceof CheckoutRefused) throw new HttpError(400, 'bad_checkout', error.message);
      throw error;
    }
  });
  return router;
}

/** Past this, a refused upload's sender is cut off rather than read to its end. */
const DISCARD_LIMIT = 512 * 1024 * 1024;

/**
 * Reads what is left of a refused upload without keeping it, so the sender gets the refusal
 * instead of a reset connection (it is still sending); storing stopped at the refusal.
 */
async function discardRest(req: IncomingMessage): Promise<void> {
  let discarded = 0;
  try {
    for await (const chunk of req) {
      discarded += (chunk as Buffer).length;
      if (discarded > DISCARD_LIMIT) {
        req.destroy();
        return;
      }
    }
  } catch {
    // the sender gave up: nothing to answer
  }
}
