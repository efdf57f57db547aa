import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Router, type Request, type Response } from 'express';

/**
 * Where `npm run build` puts the web UI (scripts/build-ui.mjs): dist/ui at the package's root, the
 * same from src/server (tests) and dist/server (the built CLI and the images).
 */
export const UI_DIR = fileURLToPath(new URL('../../dist/ui/', import.meta.url));

/** The pages a person can bookmark; each is the one index.html, which routes in the browser. */
const PAGES = ['/', '/runs', '/runs/:id', '/handlers', '/schedules', '/workflows', '/workflows/:name', '/approvals'];

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json; charset=utf-8',
};

/**
 * Nothing but this server's own files and API: the UI loads no script, style or font from
 * anywhere else, and no other site may frame it.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

interface Asset {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
}

/** The built files, read once: a few tens of kilobytes. Assets carry their content's hash in their name. */
function readUi(dir: string): { index: Buffer; assets: Map<string, Asset> } | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  const assetsDir = join(dir, 'assets');
  for (const name of existsSync(assetsDir) ? readdirSync(assetsDir) : []) {
    if (name.endsWith('.gz')) continue;
    const gz = join(assetsDir, `${name}.gz`);
    assets.set(name, {
      body: readFileSync(join(assetsDir, name)),
      gzip: existsSync(gz) ? readFileSync(gz) : null,
      type: TYPES[extname(name)] ?? 'application/octet-stream',
    });
  }
  return { index: readFileSync(join(dir, 'index.html')), assets };
}

function acceptsGzip(req: Request): boolean {
  return /\bgzip\b/.test(req.get('accept-encoding') ?? '');
}

/**
 * The web UI: the pages (index.html, never cached without asking again, so a new build shows at
 * once) and their hashed assets (cached for good: a new build has new names).
 */
export function uiRoutes(dir = UI_DIR): Router {
  const router = Router();
  let ui: ReturnType<typeof readUi> | undefined;
  const load = () => (ui ??= readUi(dir));

  const page = (_req: Request, res: Response): void => {
    const built = load();
    res.set(SECURITY_HEADERS);
    if (!built) {
      res.status(503).type('text/plain').send('The web UI is not built: run `npm run build` in the hyperspool checkout (it writes dist/ui).\n');
      return;
    }
    res.set('Cache-Control', 'no-cache').type('html').send(built.index);
  };
  for (const path of PAGES) router.get(path, page);

  router.get('/assets/:name', (req, res, next) => {
    const asset = load()?.assets.get(req.params.name);
    if (!asset) return next();
    res.set(SECURITY_HEADERS);
    res.set({ 'Cache-Control': 'public, max-age=31536000, immutable', 'Content-Type': asset.type, Vary: 'Accept-Encoding' });
    if (asset.gzip && acceptsGzip(req)) res.set('Content-Encoding', 'gzip').send(asset.gzip);
    else res.send(asset.body);
  });

  // A mistyped page address in a browser: the UI's own "No such page" (it routes in the browser),
  // with 404. The API's addresses (this one's, the chat callbacks', and Kubernetes' own on the
  // operator's aggregated API), and clients that ask for JSON, keep the API's JSON 404.
  router.get(/^\/(?!(?:v1|apis?|openapi|integrations|assets)(?:\/|$))/, (req, res, next) => {
    if (req.accepts(['json', 'html']) !== 'html') return next();
    page(req, res.status(404));
  });

  return router;
}
