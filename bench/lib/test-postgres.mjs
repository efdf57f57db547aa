/**
 * test/support/postgres.ts is TypeScript; rather than add a loader, transpile it in memory with the
 * repository's own typescript and import it as a data: URL, bare imports resolved to files first.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function loadTestPostgres(root) {
  const source = join(root, 'test', 'support', 'postgres.ts');
  if (!existsSync(source)) throw new Error('test/support/postgres.ts does not exist');
  const require = createRequire(join(root, 'package.json'));
  const ts = (await import(pathToFileURL(require.resolve('typescript')).href)).default;
  let code = ts.transpileModule(readFileSync(source, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    fileName: source,
  }).outputText;
  code = code.replace(/(from\s+|import\s*\(\s*)(['"])([^'"]+)\2/g, (whole, head, quote, spec) => {
    if (spec.startsWith('node:')) return whole;
    if (spec.startsWith('.')) throw new Error(`test/support/postgres.ts imports ${spec}; the bench cannot load it`);
    return `${head}${quote}${pathToFileURL(require.resolve(spec)).href}${quote}`;
  });
  return import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
}
