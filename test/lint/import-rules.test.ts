import { ESLint } from 'eslint';
import { beforeAll, describe, expect, test } from 'vitest';

// The import rules of eslint.config.js at work: text linted as if it were a file of the tree (an
// existing one, so the type-aware parser finds it), whose imports resolve against the real files.
// Each case breaks one arrow; if the rule is gone from the config, or resolves no import, it fails.

let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: process.cwd() });
});

async function ruleIds(filePath: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath });
  return result!.messages.map((message) => message.ruleId ?? message.message);
}

describe('import rules', { timeout: 120_000 }, () => {
  test('a verb that imports the pass at run time closes a cycle (pass.ts imports the verbs)', async () => {
    const ids = await ruleIds('src/engine/verbs/waits.ts', "import { Pass } from '../pass.js';\nexport const pass = Pass;\n");
    expect(ids).toContain('import-x/no-cycle');
  });

  test('the cluster target importing the target module closes a cycle (target.ts loads it)', async () => {
    const ids = await ruleIds('src/cli/cluster/kube-target.ts', "import { isCluster } from '../control/target.js';\nexport const cluster = isCluster;\n");
    expect(ids).toContain('import-x/no-cycle');
  });

  test('the engine, the store and common may not import the server, the operator or the CLI', async () => {
    expect(await ruleIds('src/engine/limits.ts', "import { USER_AUTHORIZATION } from '../server/access.js';\nexport const header = USER_AUTHORIZATION;\n")).toContain('import-x/no-restricted-paths');
    expect(await ruleIds('src/store/types.ts', "import { GROUP } from '../operator/api/generated.js';\nexport const group = GROUP;\n")).toContain('import-x/no-restricted-paths');
    expect(await ruleIds('src/common/ids.ts', "import { isCluster } from '../cli/control/target.js';\nexport const cluster = isCluster;\n")).toContain('import-x/no-restricted-paths');
  });

  test('common imports nothing of Hyperspool but common', async () => {
    const ids = await ruleIds('src/common/ids.ts', "import { EXIT } from '../engine/protocol.js';\nexport const exit = EXIT;\n");
    expect(ids).toContain('import-x/no-restricted-paths');
  });

  test('a type-only import counts against a zone', async () => {
    const ids = await ruleIds('src/engine/limits.ts', "import type { ServerContext } from '../server/context.js';\nexport type Context = ServerContext;\n");
    expect(ids).toContain('import-x/no-restricted-paths');
  });

  test('the in-script client imports the protocol and common, and nothing else of the engine', async () => {
    const allowed = "import { EXIT } from '../../engine/protocol.js';\nimport { oneLine } from '../../common/one-line.js';\nexport const both = [EXIT, oneLine];\n";
    expect(await ruleIds('src/cli/script/client.ts', allowed)).not.toContain('import-x/no-restricted-paths');
    const verbs = "import { VERBS } from '../../engine/verbs/index.js';\nexport const verbs = VERBS;\n";
    expect(await ruleIds('src/cli/script/client.ts', verbs)).toContain('import-x/no-restricted-paths');
    const control = "import { isCluster } from '../control/target.js';\nexport const cluster = isCluster;\n";
    expect(await ruleIds('src/cli/script/client.ts', control)).toContain('import-x/no-restricted-paths');
  });
});
