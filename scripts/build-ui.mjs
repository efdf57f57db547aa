// Builds the web UI (src/ui) into dist/ui: one script and one stylesheet named by their content's
// hash (served as immutable), a gzip copy of each, and index.html (served with no-cache), which the
// server in src/server/ui-routes.ts answers for every page address. No file is fetched from
// anywhere else at run time. Prints the sizes; docs/api.md and docs/benchmarks.md cite them.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist', 'ui');
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });

const result = await build({
  entryPoints: [join(root, 'src', 'ui', 'main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  outdir: join(out, 'assets'),
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const files = readdirSync(join(out, 'assets'));
const script = files.find((name) => name.endsWith('.js'));
const style = files.find((name) => name.endsWith('.css'));
if (!script || !style) throw new Error(`esbuild wrote no script or stylesheet: ${files.join(', ')}`);

// An inline SVG favicon: the browser asks for nothing else.
const icon = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6" fill="none" stroke="#1d5fd1" stroke-width="3"/></svg>')}`;
const index = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hyperspool</title>
<link rel="icon" href="${icon}">
<link rel="stylesheet" href="/assets/${style}">
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>The Hyperspool UI needs JavaScript. The same data is in the HTTP API (docs/api.md) and the spool CLI.</noscript></div>
</body>
</html>
`;
writeFileSync(join(out, 'index.html'), index);

const sizes = {};
for (const name of [script, style]) {
  const body = readFileSync(join(out, 'assets', name));
  const gzip = gzipSync(body, { level: 9 });
  writeFileSync(join(out, 'assets', `${name}.gz`), gzip);
  sizes[basename(name)] = { bytes: body.length, gzip: gzip.length };
}
writeFileSync(join(out, 'build.json'), `${JSON.stringify({ script, style, sizes }, null, 2)}\n`);
const total = Object.values(sizes).reduce((sum, size) => sum + size.gzip, 0);
console.log(`web UI: ${Object.entries(sizes).map(([name, size]) => `${name} ${size.bytes} B (${size.gzip} B gzip)`).join(', ')}; ${total} B gzip in all`);
void result;
