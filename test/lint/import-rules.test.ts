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

/** A file of the tree, the text linted as if it were that file, and whether the rule must report it. */
const CYCLE = 'import-x/no-cycle';
const ZONE = 'import-x/no-restricted-paths';
const importing = (name: string, from: string, type = ''): string =>
  `import ${type}{ ${name} } from '${from}';\nexport ${type ? 'type' : 'const'} x = ${name};\n`;

const CASES: [what: string, file: string, text: string, rule: string, reported: boolean][] = [
  ['a verb importing the pass at run time closes a cycle (pass.ts imports the verbs)', 'src/engine/verbs/waits.ts', importing('Pass', '../pass.js'), CYCLE, true],
  ['the cluster target importing the target module closes a cycle (target.ts loads it)', 'src/cli/cluster/kube-target.ts', importing('isCluster', '../control/target.js'), CYCLE, true],
  ['the engine may not import the server', 'src/engine/limits.ts', importing('USER_AUTHORIZATION', '../server/access.js'), ZONE, true],
  ['the store may not import the operator', 'src/store/types.ts', importing('GROUP', '../operator/api/generated.js'), ZONE, true],
  ['common may not import the CLI', 'src/common/ids.ts', importing('isCluster', '../cli/control/target.js'), ZONE, true],
  ['starting a pass may not import the operator (its Jobs are handed in as a PassRunner)', 'src/passes/start-pass.ts', importing('LABELS', '../operator/naming.js'), ZONE, true],
  ['common imports nothing of Hyperspool but common', 'src/common/ids.ts', importing('EXIT', '../engine/protocol.js'), ZONE, true],
  ['a type-only import counts against a zone', 'src/engine/limits.ts', importing('ServerContext', '../server/context.js', 'type '), ZONE, true],
  ['the in-script client may import the protocol', 'src/cli/script/client.ts', importing('EXIT', '../../engine/protocol.js'), ZONE, false],
  ['the in-script client may import common', 'src/cli/script/client.ts', importing('oneLine', '../../common/one-line.js'), ZONE, false],
  ['the in-script client may not import the verbs', 'src/cli/script/client.ts', importing('VERBS', '../../engine/verbs/index.js'), ZONE, true],
  ["the API's shapes may import the name rule", 'src/api/requests.ts', importing('NAME_RULE', '../engine/request-schema.js'), ZONE, false],
  ["the API's shapes may not import the server", 'src/api/requests.ts', importing('badRequest', '../server/http-error.js'), ZONE, true],
  ["the web UI may import the API's answers", 'src/ui/api.ts', importing('Run', '../api/responses.js', 'type '), ZONE, false],
  ['the web UI may not import the route table (it brings ajv and the engine)', 'src/ui/api.ts', importing('API_ROUTES', '../api/requests.js'), ZONE, true],
  ['the web UI may not import the server', 'src/ui/api.ts', importing('runView', '../server/runs-routes.js'), ZONE, true],
  ["the pod's agent may not import the control CLI", 'src/agent/remote/agent-process.ts', importing('isCluster', '../../cli/control/target.js'), ZONE, true],
  ["the pod's agent may import common", 'src/agent/remote/agent-process.ts', importing('oneLine', '../../common/one-line.js'), ZONE, false],
  ['the in-script client may not import the control CLI', 'src/cli/script/client.ts', importing('isCluster', '../control/target.js'), ZONE, true],
];

describe('import rules', { timeout: 120_000 }, () => {
  test.each(CASES)('%s', async (_, file, text, rule, reported) => {
    expect((await ruleIds(file, text)).includes(rule)).toBe(reported);
  });
});
