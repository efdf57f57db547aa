import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/common/errors.js';
import { checkDocument, checkInstalled, readWorkflowFile } from '../../src/workflow-file/check.js';
import { interpreterOf, kindOf, RECORDED_INTERPRETERS, runsInProcess } from '../../src/common/workflow-file.js';

const PIPELINE_TEXT = 'name: hello\njobs:\n  hello:\n    script: echo hi\n';
const GRAPH_YAML = 'name: hello\nnodes:\n  - { id: pause, type: sleep, config: { duration: 1s } }\n';
const GRAPH_JSON = '{ "nodes": [{ "id": "pause", "type": "sleep", "config": { "duration": "1s" } }] }\n';
const PIPELINE_JSON = '{ "name": "hello", "jobs": { "hello": { "script": "echo hi" } } }\n';

/** Every kind of workflow file supported today, with the interpreter its runs are recorded with. */
const KINDS = [
  { file: 'flow.sh', kind: 'bash', interpreter: 'bash -eu', text: 'echo hi\n' },
  { file: 'flow.bash', kind: 'bash', interpreter: 'bash -eu', text: 'echo hi\n' },
  { file: 'FLOW.SH', kind: 'bash', interpreter: 'bash -eu', text: 'echo hi\n' },
  { file: 'flow.py', kind: 'python', interpreter: 'python3', text: 'print(1)\n' },
  { file: 'flow.mjs', kind: 'node', interpreter: 'node', text: 'console.log(1)\n' },
  { file: 'flow.js', kind: 'node', interpreter: 'node', text: 'console.log(1)\n' },
  { file: 'flow.cjs', kind: 'node', interpreter: 'node', text: 'console.log(1)\n' },
  { file: 'flow.yaml', kind: 'pipeline', interpreter: 'pipeline', text: PIPELINE_TEXT },
  { file: 'flow.yml', kind: 'pipeline', interpreter: 'pipeline', text: PIPELINE_TEXT },
  { file: 'flow.json', kind: 'pipeline', interpreter: 'pipeline', text: PIPELINE_JSON },
  { file: 'flow.yaml', kind: 'graph', interpreter: 'graph', text: GRAPH_YAML },
  { file: 'flow.json', kind: 'graph', interpreter: 'graph', text: GRAPH_JSON },
] as const;

describe('what a workflow file is', () => {
  it.each(KINDS)('$file: kind $kind, recorded as "$interpreter", checked and read', ({ file, kind, interpreter, text }) => {
    expect(kindOf(file, text)).toBe(kind);
    expect(interpreterOf(file, text)).toBe(interpreter);
    expect(RECORDED_INTERPRETERS).toContain(interpreter);
    expect(() => checkDocument(file, text)).not.toThrow();
    expect(() => checkInstalled(file)).not.toThrow(); // bash, python3 and node are on this machine's PATH
    const path = join(mkdtempSync(join(tmpdir(), 'workflow-file-')), file);
    writeFileSync(path, text);
    expect(readWorkflowFile(path)).toEqual({ script: text, interpreter });
    expect(runsInProcess({ interpreter })).toBe(kind === 'pipeline' || kind === 'graph');
  });

  it('refuses a name no kind has with one line naming the extensions that pick one', () => {
    for (const check of [() => kindOf('flow.rb'), () => interpreterOf('flow.rb'), () => checkDocument('flow.rb', ''), () => checkInstalled('flow.rb')]) {
      expect(check).toThrow(UsageError);
      expect(check).toThrow(/^cannot tell how to run flow\.rb: its extension picks the interpreter \(\.sh, \.bash, \.py, \.mjs, \.js, \.cjs\)$/);
    }
  });

  it('refuses a pipeline document that is not valid, saying where', () => {
    expect(() => checkDocument('bad.yaml', 'jobs:\n  hello: [\n')).toThrow(/bad\.yaml/);
    const path = join(mkdtempSync(join(tmpdir(), 'workflow-file-')), 'bad.yaml');
    writeFileSync(path, 'jobs: 3\n');
    expect(() => readWorkflowFile(path)).toThrow(/bad\.yaml/);
  });

  it('refuses a graph document that is not valid, saying where, as JSON and as YAML', () => {
    expect(() => checkDocument('bad.json', '{ "nodes": [{ "id": "a", "type": "smtp", "config": {} }] }\n')).toThrow(
      /^bad\.json:1:34: 'type' must be one of http, script, call, approval, wait, sleep$/,
    );
    expect(() => checkDocument('bad.yaml', 'nodes:\n  - { id: a, type: sleep, depends_on: [b], config: { duration: 1s } }\n')).toThrow(
      /^bad\.yaml:2:40: depends_on names unknown node 'b' \(did you mean 'a'\?\)$/,
    );
  });

  it('refuses a script whose interpreter is not installed, and a file that is not there', () => {
    const path = process.env.PATH;
    process.env.PATH = mkdtempSync(join(tmpdir(), 'empty-path-'));
    try {
      expect(() => checkInstalled('flow.py')).toThrow(/^flow\.py needs python3, which is not installed here \(not found on PATH\)$/);
      expect(() => checkInstalled('flow.yaml')).not.toThrow(); // a pipeline runs in this process
    } finally {
      process.env.PATH = path;
    }
    expect(() => readWorkflowFile('/nonexistent/flow.sh')).toThrow(/^\/nonexistent\/flow\.sh: no such file$/);
  });
});
