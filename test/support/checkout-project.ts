import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, writeFiles } from './spool.js';

/** A project directory: a script, its helpers and config, and what its .gitignore leaves out. */
export function project(): string {
  const dir = tempDir();
  for (const sub of ['lib/deep', 'build', 'node_modules/x']) mkdirSync(join(dir, sub), { recursive: true });
  writeFiles(dir, {
    '.gitignore': 'build/\n*.log\nnode_modules\n!keep.log\n',
    'lib/helpers.sh': 'helper() { echo "helper says hi"; }\n',
    'lib/deep/data.txt': 'deep data\n',
    'config.json': '{"env":"prod"}\n',
    'build/out.o': 'built\n',
    'debug.log': 'noise\n',
    'keep.log': 'kept\n',
    'node_modules/x/index.js': 'x\n',
    // Each pass checks out into a directory of its own, as a pod with an empty filesystem would.
    'flow.sh': `set -e
work=$(mktemp -d)
cd "$work"
spool checkout src
. src/lib/helpers.sh
helper
echo "pass $SPOOL_PASS config: $(cat src/config.json)"
(cd src && find . -type f | sort | tr '\\n' ' '); echo
cd /; rm -rf "$work"
spool sleep 1s
`,
  });
  return dir;
}

/** What each pass of flow.sh lists of its checkout: the project minus what its .gitignore leaves out. */
export const CHECKED_OUT = /^\.\/\.gitignore \.\/config\.json \.\/flow\.sh \.\/keep\.log \.\/lib\/deep\/data\.txt \.\/lib\/helpers\.sh $/gm;
