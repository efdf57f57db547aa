import { ANSWER_WITHIN } from './bash.js';
import { SLOW_STEP_SECONDS, isSlowStep, type Op, type Workflow } from './generate.js';

const OVER_LIMIT = 500 * 1024;

/** A step body as bash.ts's: counts its execution, prints the op's bytes, then a nonce (or not). */
const body = (id: string, tail: string): string =>
  `['sh', '-c', 'echo "${id} $$" >> "$VERIFY_COUNT"; cat "$VERIFY_DATA/${id}"${tail}']`;
const nonce = (exit: number, slow = false): string => `; od -An -N8 -tx1 /dev/urandom | tr -d " \\\\n"; ${slow ? `sleep ${SLOW_STEP_SECONDS}; ` : ''}exit ${exit}`;

/** A step's stdout as the SDK gives it back, as the bytes it printed (surrogateescape keeps them). */
const bytesOf = (text: string): string => `${text}.encode('utf-8', 'surrogateescape')`;

/** `firstLock`: whether op is the workflow's first lock, which alone may take the SDK's one bare lease. */
function line(op: Op, firstLock: boolean): string {
  const { id } = op;
  switch (op.kind) {
    case 'step':
      return `r = script.step('${id}', ${body(id, nonce(op.exit, isSlowStep(op)))}, check=False)\nsaw('${id}', ${bytesOf('r.stdout')}, r.exit_code)`;
    case 'print':
      return `sys.stdout.buffer.write(data('${id}'))\nsys.stdout.flush()\nsaw('${id}', None, 0)`;
    case 'put-file':
      return [
        `script.step('${id}-make', ['sh', '-c', 'echo "${id}-make $$" >> "$VERIFY_COUNT"; cat "$VERIFY_DATA/${id}" > ${id}.bin'])`,
        `c = put('${id}', '${id}.bin')`,
        // As rm -f: on a replay the step did not run, so this pass made no file.
        `if os.path.exists('${id}.bin'):\n    os.remove('${id}.bin')`,
        `got('${id}', c)`,
      ].join('\n');
    case 'put-stdin':
      // The SDK puts files only, not stdin: the file here is the data file, outside the working directory.
      return `got('${id}', put('${id}', os.path.join(D, '${id}')))`;
    case 'refused-put':
      // Both forms put a file (the SDK has no stdin put); the refusal is the SDK's ScriptError, caught.
      return `with open('big.bin', 'wb') as f:\n    f.write(bytes(${OVER_LIMIT}))\nsaw('${id}', None, put('${id}', 'big.bin'))`;
    case 'refused-incr':
      // The SDK has no state incr: `spool state incr` as a subprocess, its exit status caught as bash's is.
      return `script.state_set('${id}-cell', 'text')\nsaw('${id}', None, spool('state', 'incr', '${id}-cell').returncode)`;
    case 'incr':
      // The SDK has no state incr: `spool state incr` as a subprocess.
      return `r = spool('state', 'incr', '${id}', '--by', '${op.by}')\nsaw('${id}', r.stdout, r.returncode)`;
    case 'claim':
      return `saw('${id}', None, 0 if script.state_add('${id}', 'taken') else 3)`;
    case 'sleep':
      return `script.sleep(${op.ms / 1000})\nsaw('${id}', None, 0)`;
    case 'wait-timeout':
      return `saw('${id}', None, 124 if script.wait_signal('${id}', timeout=0.2) is None else 0)`;
    case 'wait-signal':
      // The SDK gives the text without the newline the native client prints after it: put back, as bash's file has it.
      return `r = script.wait_signal('${id}', timeout=${parseInt(ANSWER_WITHIN)})\nsaw('${id}', None if r is None else (r + '\\n' if r else '').encode(), 124 if r is None else 0)`;
    case 'wait-event':
      // The SDK parses the payload: written back as the JSON bash's client prints (JSON.stringify's spacing).
      return `r = script.wait_event('${id}-type', timeout=${parseInt(ANSWER_WITHIN)})\nsaw('${id}', None if r is None else (json.dumps(r, ensure_ascii=False, separators=(',', ':')) + '\\n').encode(), 124 if r is None else 0)`;
    case 'emit':
      return `saw('${id}', (script.emit('${id}-type', {'n': 1}) + '\\n').encode(), 0)`;
    case 'lock':
      // The SDK's lock takes the run's one bare lease (a second is refused): the first lock op takes it,
      // its body a step, recorded as `spool lock -- cmd`'s is; later ones lock a section with
      // `spool lock GROUP -- CMD` as a subprocess, as bash does.
      return firstLock
        ? `with script.lock('${id}-group'):\n    r = script.step('${id}', ${body(id, '')})\nsaw('${id}', ${bytesOf('r')}, 0)`
        : `r = spool('lock', '${id}-group', '--', *${body(id, '')})\nsaw('${id}', r.stdout, r.returncode)`;
    case 'call':
      // The SDK spawns a child run but has no call (start and wait): `spool call` as a subprocess.
      return `script.step('${id}-make', ['sh', '-c', 'echo "${id}-make $$" >> "$VERIFY_COUNT"; printf "spool step c -- echo child-${id}\\\\n" > ${id}.sh'])\nr = spool('call', '${id}.sh')\nsaw('${id}', r.stdout, r.returncode)`;
    case 'call-node':
      return `call_node('${id}')`;
    case 'call-graph':
      return `script.step('${id}-make', ['sh', '-c', 'echo "${id}-make $$" >> "$VERIFY_COUNT"; cp "$VERIFY_DATA/${id}.yaml" ${id}.yaml'])\ncall_graph('${id}')`;
    case 'activity':
      return `r = script.activity('${id}', ['sh', '-c', 'echo "${id} $$" >> "$VERIFY_COUNT"; cat "$VERIFY_DATA/${id}"'])\nsaw('${id}', ${bytesOf('r')}, 0)`;
    case 'activity-all':
      // The SDK has no submit or wait --all: both as subprocesses, as bash runs them.
      return `spool('activity', 'submit', '${id}', '--', 'sh', '-c', 'echo "${id} $$" >> "$VERIFY_COUNT"; cat "$VERIFY_DATA/${id}" >&2; exit 3')\nr = spool('activity', 'wait', '--all')\nsaw('${id}', r.stdout, r.returncode)`;
    case 'checkout':
      return [
        `c = checkout('${id}-co')`,
        `saw('${id}', open('${id}-co/co.bin', 'rb').read() if os.path.exists('${id}-co/co.bin') else b'', c)`,
      ].join('\n');
  }
}

/** What every script defines: where it writes what it saw, and the calls the SDK has no function for. */
const PRELUDE = `import json, os, subprocess, sys
from hyperspool import script

O, P, D = os.environ['VERIFY_OUT'], os.environ['SPOOL_PASS'], os.environ['VERIFY_DATA']


def saw(id, seen, code):
    """Bytes into $O/<id>.<pass>, then the code (last: a pass killed half-way leaves no code)."""
    with open(os.path.join(O, f'{id}.{P}'), 'wb') as f:
        f.write(seen or b'')
    with open(os.path.join(O, f'{id}.{P}.code'), 'w') as f:
        f.write(f'{code}\\n')


def data(id):
    with open(os.path.join(D, id), 'rb') as f:
        return f.read()


def put(name, path):
    """A put, its refusal caught as the SDK raises it: the code the agent answered, as bash's client exits."""
    try:
        script.artifact_put(name, path)
        return 0
    except script.ScriptError as error:
        return error.exit_code


def got(id, code):
    """The artifact read back with the SDK, written as what the script saw, with the put's code (none: nothing, as bash's get)."""
    try:
        seen = open(script.artifact_get(id, os.path.join(O, f'{id}.{P}')), 'rb').read()
    except script.ScriptError:
        seen = b''
    saw(id, seen, code)


def checkout(dest):
    """The SDK's checkout, its refusal caught: the code bash's spool checkout exits with."""
    try:
        script.checkout(dest)
        return 0
    except script.ScriptError as error:
        return error.exit_code


def printed(value):
    """A value as bash's client prints the JSON it answers: compact, one line."""
    return (json.dumps(value, separators=(',', ':'), ensure_ascii=False) + '\\n').encode()


def call_node(id):
    """The SDK's call_node of an http node to the harness's key server, keyed as the seed's charge node is."""
    url = f"{os.environ['VERIFY_HTTP']}/{id}"
    output = script.call_node('http', {'method': 'POST', 'url': url, 'headers': {'Idempotency-Key': {'$expr': 'node.idempotency_key'}}}, name=id)
    saw(id, printed(output), 0)


def call_graph(id):
    """The SDK's call_graph, its refusal (a new call whose file went with a lost pass) caught: bash's exit code."""
    try:
        saw(id, printed(script.call_graph(f'{id}.yaml', {'x': id})), 0)
    except script.ScriptError as error:
        saw(id, None, error.exit_code)


def spool(*argv):
    """A verb the SDK has no function for, run as bash runs it; stderr dropped as bash's 2>/dev/null does."""
    return subprocess.run(['spool', *argv], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
`;

/** The workflow as a Python script calling the Python SDK (sdk/python), with bash.ts's contract. */
export function pythonScript(workflow: Workflow): string {
  return [`# replay verifier, seed ${workflow.seed}`, PRELUDE, ...workflow.ops.map((op) => line(op, op === workflow.ops.find((each) => each.kind === 'lock'))), ''].join('\n');
}
