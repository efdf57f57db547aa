import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { documentKind, interpreterOf, isDocumentFile } from '../../common/workflow-file.js';
import { parseDuration } from '../../common/duration.js';
import { UsageError } from '../../common/errors.js';
import { notUtf8 } from '../../common/text-file.js';
import { CHECKOUT_ARTIFACT, type ActivitySpec, type Request } from '../../engine/protocol.js';

/** A parsed in-script call: the request, and the command to run if the agent says execute. */
export interface ScriptCall {
  request: Request;
  command?: string[];
  /** An artifact's bytes: read from `source` (a put) or written to `dest` (a get); '-' is stdin or stdout. */
  artifact?: { source: string } | { dest: string } | { extract: string };
}

type Options = NonNullable<ParseArgsConfig['options']>;

const USAGE: Record<string, string> = {
  step: 'spool step NAME [--label TEXT] -- COMMAND [ARG...]',
  sleep: 'spool sleep DURATION',
  'wait signal': 'spool wait signal NAME [--timeout DURATION]',
  'wait event': 'spool wait event TYPE [--timeout DURATION]',
  lock: 'spool lock GROUP [-- COMMAND [ARG...]]',
  'activity submit': 'spool activity submit NAME [--requires CAP] [--attempts N] [--backoff D] [--retry-on-exit CODES] -- COMMAND',
  'activity run': 'spool activity run NAME [--requires CAP] [--attempts N] [--backoff D] [--retry-on-exit CODES] -- COMMAND',
  'activity wait': 'spool activity wait NAME | --all',
  'activity collect': 'spool activity collect NAME',
  'activity wait-all': 'spool activity wait-all',
  activity: 'spool activity submit|run|wait|collect|wait-all ...',
  'state get': 'spool state get KEY [--entity NAME]',
  'state set': 'spool state set KEY VALUE [--entity NAME]',
  'state delete': 'spool state delete KEY [--entity NAME]',
  'state list': 'spool state list [PREFIX] [--entity NAME]',
  'state version': 'spool state version KEY [--entity NAME]',
  'state add': 'spool state add KEY [VALUE] [--entity NAME]',
  'state incr': 'spool state incr KEY [--by N] [--op NAME] [--entity NAME]',
  'state cas': "spool state cas KEY EXPECTED NEW [--op NAME] [--entity NAME]   (EXPECTED '' means absent)",
  'event emit': 'spool event emit TYPE [--key SUBJECT] [--payload JSON]',
  spawn: 'spool spawn FILE [--input JSON]',
  call: 'spool call FILE [--input JSON]',
  'call-node': 'spool call-node TYPE --config JSON [--name NAME]',
  'call-graph': 'spool call-graph FILE [--input JSON]',
  'output set': 'spool output set KEY VALUE',
  annotate: 'spool annotate TEXT',
  'artifact put': 'spool artifact put NAME FILE|- [--type CONTENT-TYPE]',
  'artifact get': 'spool artifact get NAME [DEST|-] [--run RUN]',
  'artifact list': 'spool artifact list [--json] [--run RUN]',
  artifact: 'spool artifact put|get|list ...',
  checkout: 'spool checkout [DEST]',
};

const IN_SCRIPT_HELP_HEADER =
  "Usage inside a workflow script: each call is a checkpoint in the run's journal, and a replay answers it from there\n" +
  '(control commands such as spool runs or spool submit are for outside a script)';

/**
 * `spool --help` inside a script (SPOOL_SOCKET set): the in-script verbs, not the control CLI's. One
 * line per usage, sorted, skipping a group's summary line ('activity') for its verbs'; the native
 * client (sdk/go/cmd/spool/help.go) prints the same text from the same table.
 */
export function inScriptHelp(): string {
  const keys = Object.keys(USAGE).filter((key) => !Object.keys(USAGE).some((other) => other.startsWith(`${key} `)));
  const lines = keys.sort().map((key) => `  ${USAGE[key] ?? ''}`);
  return `${IN_SCRIPT_HELP_HEADER}\n\n${lines.join('\n')}\n`;
}

function fail(verb: string, problem: string): never {
  const usage = USAGE[verb];
  throw new UsageError(`spool ${verb}: ${problem}${usage ? ` (usage: ${usage})` : ''}`);
}

/** Splits at the first `--`: spool's own arguments before it, the command after it. */
function splitCommand(args: string[]): { own: string[]; command: string[] | null } {
  const at = args.indexOf('--');
  return at < 0 ? { own: args, command: null } : { own: args.slice(0, at), command: args.slice(at + 1) };
}

/**
 * parseArgs calls `--by -3` ambiguous (a value that looks like an option); no option is a digit,
 * so a negative number after an option that takes a value is that value: `--by=-3`.
 */
function joinNegativeValues(args: string[], options: Options): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const next = args[i + 1];
    const takesValue = arg.startsWith('--') && options[arg.slice(2)]?.type === 'string';
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

function parse(verb: string, args: string[], options: Options, positionals: [min: number, max: number]) {
  let parsed;
  try {
    parsed = parseArgs({ args: joinNegativeValues(args, options), options, strict: true, allowPositionals: true });
  } catch (error) {
    fail(verb, (error as Error).message.split('\n')[0]?.replace(/\. To specify a positional.*$/, '') ?? 'bad arguments');
  }
  const [min, max] = positionals;
  if (parsed.positionals.length < min) fail(verb, 'missing arguments');
  if (parsed.positionals.length > max) fail(verb, `unexpected argument '${parsed.positionals[max] ?? ''}'`);
  return { values: parsed.values as Record<string, string | boolean | string[] | undefined>, positionals: parsed.positionals };
}

function requireCommand(verb: string, command: string[] | null): string[] {
  if (command === null) fail(verb, "missing '--' before the command");
  if (command.length === 0) fail(verb, "no command after '--'");
  return command;
}

function duration(verb: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseDuration(text);
  } catch (error) {
    fail(verb, (error as Error).message);
  }
}

function integer(verb: string, flag: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  if (!/^-?\d+$/.test(text) || Number(text) < min) fail(verb, `${flag} takes a whole number of at least ${min}, not '${text}'`);
  return Number(text);
}

function json(verb: string, flag: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    fail(verb, `${flag} is not valid JSON: ${text.length > 60 ? `${text.slice(0, 60)}...` : text}`);
  }
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const entityOf = (values: Record<string, unknown>): { entity?: string } =>
  typeof values.entity === 'string' ? { entity: values.entity } : {};

function activitySpec(verb: string, args: string[]): { spec: ActivitySpec; command: string[] } {
  const { own, command } = splitCommand(args);
  // Before the arguments, so `NAME echo hi` says the `--` is missing rather than that `echo` is unexpected.
  const argv = requireCommand(verb, command);
  const { values, positionals } = parse(
    verb,
    own,
    {
      requires: { type: 'string', multiple: true },
      attempts: { type: 'string' },
      backoff: { type: 'string' },
      'retry-on-exit': { type: 'string' },
    },
    [1, 1],
  );
  const retryText = str(values['retry-on-exit']);
  let retryOnExit: number[] | null = null;
  if (retryText !== undefined) {
    retryOnExit = retryText.split(',').map((code) => integer(verb, '--retry-on-exit', code.trim(), 0, 1));
  }
  const requires = ((values.requires as string[] | undefined) ?? []).flatMap((cap) => cap.split(',')).filter(Boolean);
  return {
    spec: {
      name: positionals[0] ?? '',
      argv,
      requires,
      attempts: integer(verb, '--attempts', str(values.attempts), 1, 1),
      backoffMs: duration(verb, str(values.backoff)) ?? 1000,
      retryOnExit,
    },
    command: argv,
  };
}

/**
 * The child's script is read now (the run records the script it started, not a path that may change
 * before a later pass). A file that cannot be read still goes to the agent with the reason: a
 * replayed call needs no file (a new pod has none of the files the last pass made), and a new one
 * is refused there, taking no position. `call-graph` is a `call` of a file that must be a graph.
 */
function childCall(verb: 'spawn' | 'call' | 'call-graph', args: string[]): ScriptCall {
  const { values, positionals } = parse(verb, args, { input: { type: 'string' } }, [1, 1]);
  const file = positionals[0] ?? '';
  const input = json(verb, '--input', str(values.input));
  // A name whose extension picks nothing is still sent when there is no such file: on a cluster
  // it may be a Workflow's name (docs/graphs.md); a file that exists is refused here.
  let interpreter: string | undefined;
  let unknownKind: unknown;
  try {
    interpreter = interpreterOf(file);
  } catch (error) {
    unknownKind = error;
  }
  let script = '';
  let unreadable: string | undefined;
  let missing = false;
  try {
    const bytes = readFileSync(file);
    try {
      script = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      unreadable = `spool ${verb}: ${notUtf8(file, bytes)}`;
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    unreadable = `spool ${verb}: cannot read ${file}${code === 'ENOENT' ? ': no such file' : code === 'EISDIR' ? ': it is a directory' : code ? `: ${code}` : ''}`;
    missing = code === 'ENOENT';
  }
  if (interpreter === undefined && !missing) throw unknownKind;
  // A graph called by name must be one: a script or a pipeline is refused here, not run.
  if (verb === 'call-graph' && unreadable === undefined && !(isDocumentFile(file) && documentKind(script) === 'graph')) {
    fail(verb, `${file} is not a graph (a .json, .yaml or .yml document whose top level has nodes)`);
  }
  return {
    request: {
      verb: verb === 'spawn' ? 'spawn' : 'call',
      workflow: file,
      script,
      ...(interpreter === undefined ? {} : { interpreter }),
      ...(input === undefined ? {} : { input }),
      ...(unreadable === undefined ? {} : { unreadable }),
    },
  };
}

/** One graph node kind, run by the agent as durable calls of this run (docs/graphs.md). */
function callNode(args: string[]): ScriptCall {
  const { values, positionals } = parse('call-node', args, { config: { type: 'string' }, name: { type: 'string' } }, [1, 1]);
  const text = str(values.config);
  if (text === undefined) fail('call-node', 'missing --config');
  const config = json('call-node', '--config', text);
  if (typeof config !== 'object' || config === null || Array.isArray(config)) fail('call-node', '--config is not a JSON object');
  const name = str(values.name);
  return { request: { verb: 'call.node', type: positionals[0] ?? '', config: config as Record<string, unknown>, ...(name === undefined ? {} : { name }) } };
}

/** Turns `spool <verb> ...` into a request, refusing bad input before anything reaches the agent. */
export function parseScriptCall(args: string[]): ScriptCall {
  const [verb = '', ...rest] = args;
  switch (verb) {
    case 'step': {
      const { own, command } = splitCommand(rest);
      const argv = requireCommand('step', command); // first, as in activitySpec
      const { values, positionals } = parse('step', own, { label: { type: 'string' } }, [1, 1]);
      const label = str(values.label);
      return {
        request: { verb: 'step', name: positionals[0] ?? '', ...(label ? { label } : {}) },
        command: argv,
      };
    }
    case 'sleep': {
      // Before parseArgs, which would take '-1s' for an unknown option '-1'.
      if (/^-\d/.test(rest[0] ?? '')) fail('sleep', `a duration cannot be negative: '${rest[0] ?? ''}'`);
      const { positionals } = parse('sleep', rest, {}, [1, 1]);
      return { request: { verb: 'sleep', ms: duration('sleep', positionals[0]) ?? 0 } };
    }
    case 'wait': {
      const [kind = '', ...tail] = rest;
      if (kind !== 'signal' && kind !== 'event') fail('wait', `unknown wait '${kind}'; use 'wait signal NAME' or 'wait event TYPE'`);
      const what = `wait ${kind}`;
      const { values, positionals } = parse(what, tail, { timeout: { type: 'string' } }, [1, 1]);
      const timeoutMs = duration(what, str(values.timeout));
      const timeout = timeoutMs === undefined ? {} : { timeoutMs };
      const name = positionals[0] ?? '';
      return { request: kind === 'signal' ? { verb: 'wait.signal', name, ...timeout } : { verb: 'wait.event', type: name, ...timeout } };
    }
    case 'lock': {
      const { own, command } = splitCommand(rest);
      const { positionals } = parse('lock', own, {}, [1, 1]);
      const group = positionals[0] ?? '';
      if (command === null) return { request: { verb: 'lock', group, command: false } };
      return { request: { verb: 'lock', group, command: true }, command: requireCommand('lock', command) };
    }
    case 'activity':
      return parseActivity(rest);
    case 'state':
      return parseState(rest);
    case 'event': {
      const [sub = '', ...tail] = rest;
      if (sub !== 'emit') fail('event emit', `unknown event command '${sub}'`);
      const { values, positionals } = parse('event emit', tail, { key: { type: 'string' }, payload: { type: 'string' } }, [1, 1]);
      const payload = json('event emit', '--payload', str(values.payload));
      const subject = str(values.key);
      return {
        request: { verb: 'event.emit', type: positionals[0] ?? '', ...(subject ? { subject } : {}), ...(payload === undefined ? {} : { payload }) },
      };
    }
    case 'spawn':
    case 'call':
      return childCall(verb, rest);
    case 'call-node':
      return callNode(rest);
    case 'call-graph':
      // Locally a stored graph is its file, called as `spool call FILE` calls one (docs/graphs.md).
      return childCall(verb, rest);
    case 'output': {
      const [sub = '', ...tail] = rest;
      if (sub !== 'set') fail('output set', `unknown output command '${sub}'`);
      const { positionals } = parse('output set', tail, {}, [2, 2]);
      return { request: { verb: 'output.set', key: positionals[0] ?? '', value: positionals[1] ?? '' } };
    }
    case 'annotate': {
      const { positionals } = parse('annotate', rest, {}, [1, 1]);
      return { request: { verb: 'annotate', text: positionals[0] ?? '' } };
    }
    case 'artifact':
      return parseArtifact(rest);
    case 'checkout': {
      const { positionals } = parse('checkout', rest, {}, [0, 1]);
      return { request: { verb: 'artifact.get', name: CHECKOUT_ARTIFACT, part: 0 }, artifact: { extract: positionals[0] ?? '.' } };
    }
    default:
      throw new UsageError(`spool: unknown verb '${verb}'`);
  }
}

function parseActivity(args: string[]): ScriptCall {
  const [sub = '', ...rest] = args;
  switch (sub) {
    case 'submit': {
      const { spec } = activitySpec('activity submit', rest);
      return { request: { verb: 'activity.submit', ...spec } };
    }
    case 'run': {
      const { spec } = activitySpec('activity run', rest);
      return { request: { verb: 'activity.run', ...spec } };
    }
    case 'wait': {
      const { values, positionals } = parse('activity wait', rest, { all: { type: 'boolean' } }, [0, 1]);
      if (values.all === true) {
        if (positionals.length > 0) fail('activity wait', 'give a NAME or --all, not both');
        return { request: { verb: 'activity.wait', all: true } };
      }
      if (positionals.length === 0) fail('activity wait', 'missing NAME');
      return { request: { verb: 'activity.wait', name: positionals[0] ?? '' } };
    }
    // The seed's names (activity_collect, activity_wait_all) as commands too.
    case 'collect': {
      const { positionals } = parse('activity collect', rest, {}, [1, 1]);
      return { request: { verb: 'activity.wait', name: positionals[0] ?? '' } };
    }
    case 'wait-all':
      parse('activity wait-all', rest, {}, [0, 0]);
      return { request: { verb: 'activity.wait', all: true } };
    default:
      return fail('activity', `unknown activity command '${sub}'; use submit, run, wait, collect or wait-all`);
  }
}

/** The last part of an artifact's name: where `artifact get NAME` writes when given no DEST. */
function lastPart(name: string): string {
  const parts = name.split('/').filter((part) => part !== '' && part !== '.' && part !== '..');
  return parts[parts.length - 1] ?? '';
}

function parseArtifact(args: string[]): ScriptCall {
  const [sub = '', ...rest] = args;
  const run = { run: { type: 'string' } } as const;
  switch (sub) {
    case 'put': {
      const { values, positionals } = parse('artifact put', rest, { type: { type: 'string' } }, [2, 2]);
      const contentType = str(values.type);
      return {
        request: { verb: 'artifact.put', name: positionals[0] ?? '', ...(contentType ? { contentType } : {}) },
        artifact: { source: positionals[1] ?? '' },
      };
    }
    case 'get': {
      const { values, positionals } = parse('artifact get', rest, run, [1, 2]);
      const name = positionals[0] ?? '';
      const dest = positionals[1] ?? lastPart(name);
      if (dest === '') fail('artifact get', `'${name}' names no file to write to; give a DEST`);
      const from = str(values.run);
      return { request: { verb: 'artifact.get', name, part: 0, ...(from ? { run: from } : {}) }, artifact: { dest } };
    }
    case 'list': {
      const { values } = parse('artifact list', rest, { ...run, json: { type: 'boolean' } }, [0, 0]);
      const from = str(values.run);
      return { request: { verb: 'artifact.list', ...(from ? { run: from } : {}), ...(values.json === true ? { json: true } : {}) } };
    }
    default:
      return fail('artifact', `unknown artifact command '${sub}'; use put, get or list`);
  }
}

function parseState(args: string[]): ScriptCall {
  const [sub = '', ...rest] = args;
  const verb = `state ${sub}`;
  const entity = { entity: { type: 'string' } } as const;
  switch (sub) {
    case 'get':
    case 'delete':
    case 'version': {
      const { values, positionals } = parse(verb, rest, entity, [1, 1]);
      return { request: { verb: `state.${sub}`, key: positionals[0] ?? '', ...entityOf(values) } };
    }
    case 'set': {
      const { values, positionals } = parse(verb, rest, entity, [2, 2]);
      return { request: { verb: 'state.set', key: positionals[0] ?? '', value: positionals[1] ?? '', ...entityOf(values) } };
    }
    case 'list': {
      const { values, positionals } = parse(verb, rest, entity, [0, 1]);
      return { request: { verb: 'state.list', ...(positionals[0] ? { prefix: positionals[0] } : {}), ...entityOf(values) } };
    }
    case 'add': {
      const { values, positionals } = parse(verb, rest, entity, [1, 2]);
      const value = positionals[1];
      return { request: { verb: 'state.add', key: positionals[0] ?? '', ...(value === undefined ? {} : { value }), ...entityOf(values) } };
    }
    case 'incr': {
      const { values, positionals } = parse(verb, rest, { ...entity, by: { type: 'string' }, op: { type: 'string' } }, [1, 1]);
      const op = str(values.op);
      return {
        request: {
          verb: 'state.incr',
          key: positionals[0] ?? '',
          by: integer(verb, '--by', str(values.by), 1, Number.MIN_SAFE_INTEGER),
          ...(op ? { op } : {}),
          ...entityOf(values),
        },
      };
    }
    case 'cas': {
      const { values, positionals } = parse(verb, rest, { ...entity, op: { type: 'string' } }, [3, 3]);
      const op = str(values.op);
      const expected = positionals[1] ?? '';
      return {
        request: {
          verb: 'state.cas',
          key: positionals[0] ?? '',
          expected: expected === '' ? null : expected,
          value: positionals[2] ?? '',
          ...(op ? { op } : {}),
          ...entityOf(values),
        },
      };
    }
    default:
      return fail('state get', `unknown state command '${sub}'; use get, set, add, incr, cas, delete, list or version`);
  }
}
