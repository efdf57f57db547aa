/**
 * The `spool` command. In-script verbs (step, sleep, wait, ...) run once per durable call inside a
 * script, so they load only the small socket client; everything else loads the full control CLI.
 */
import { setFlagsFromString } from 'node:v8';

// V8 doubles its young generation (up to 2 × 16 MiB) whenever many objects survive a scavenge, as
// they do while PGlite and the CLI start, and never gives those pages back: `spool dev` held them
// idle for its whole life. Kept at its first size (2 × 1 MiB), a first run peaks ~10 MiB lower and
// `spool dev` settles a few MiB lower, for no measured CPU (docs/benchmarks.md). `--max-semi-space-size`
// would say it more plainly but only takes effect as a flag to node itself; this one is read at
// each growth.
setFlagsFromString('--semi-space-growth-factor=1');

const SCRIPT_VERBS = new Set(['step', 'sleep', 'wait', 'state', 'lock', 'activity', 'spawn', 'call', 'call-node', 'call-graph', 'output', 'annotate', 'artifact', 'checkout']);

const args = process.argv.slice(2);
const verb = args[0] ?? '';
// `event emit` is recorded when a script calls it, and sent to a server when a person does; and
// a script that asks for help gets the verbs it can call (src/cli/script/parse.ts inScriptHelp).
const HELP_WORDS = new Set(['--help', '-h', 'help']);
const inScriptHelp = process.env.SPOOL_SOCKET !== undefined && HELP_WORDS.has(verb);
const inScript = SCRIPT_VERBS.has(verb) || (verb === 'event' && process.env.SPOOL_SOCKET !== undefined);
// A script's `spool` or `spool --` is a mistake in the script: one line, not the whole help a
// person at a terminal gets.
const noVerbInScript = process.env.SPOOL_SOCKET !== undefined && args.every((arg) => arg === '--');
// A pass Job's `spool agent --socket S --control C` starts without the control CLI: the agent's
// start is on every cold pass's path.
const podAgent = verb === 'agent' ? await import('../agent/remote/agent-process.js').then((agent) => agent.podAgentOf(args)) : null;

if (noVerbInScript) {
  process.stderr.write("spool: no verb given; 'spool --help' lists the verbs a script can call\n");
  process.exitCode = 2;
} else if (inScriptHelp) {
  const { inScriptHelp: help } = await import('./script/parse.js');
  process.stdout.write(help());
} else if (podAgent) {
  process.exitCode = await podAgent.run();
} else if (inScript) {
  const { runScriptVerb } = await import('./script/run-verb.js');
  process.exitCode = await runScriptVerb(args);
} else {
  const { runControl } = await import('./control/program.js');
  process.exitCode = await runControl(args);
}
