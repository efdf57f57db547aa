// What the Node client makes of each argument vector on stdin: its request as JSON.stringify
// writes it and its command, or its error message. Run from sdk/go/cmd/spool/testdata with the
// TypeScript built (npm run build).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
process.chdir(fileURLToPath(new URL('..', import.meta.url)));
const { parseScriptCall } = await import('../../../../../dist/cli/script/parse.js');
const out = [];
for (const args of JSON.parse(readFileSync(0, 'utf8'))) {
  try {
    const call = parseScriptCall(args);
    out.push({ args, request: JSON.stringify(call.request), command: call.command ?? null, ...(call.artifact ? { artifact: call.artifact } : {}) });
  } catch (error) {
    out.push({ args, error: error.message });
  }
}
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
