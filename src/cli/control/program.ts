import { constants } from 'node:os';
import { Command, CommanderError, Option } from 'commander';
import { UsageError, ensureError, exitCodeOf } from '../../common/errors.js';
import { oneLine } from '../../common/one-line.js';
import { EXIT } from '../../engine/protocol.js';
import { chatOption } from '../chat-option.js';
import { registerClusterInternals } from '../cluster/internal-commands.js';
import { registerServerCommands } from './server-commands.js';
import { registerUiCommand } from './ui-command.js';

function storeOptions(command: Command): Command {
  return command
    .addOption(new Option('--data-dir <dir>', 'where the embedded store keeps its files').default('.spool'))
    .option('--database-url <url>', 'a PostgreSQL server to use instead of the embedded store', process.env.SPOOL_DATABASE_URL)
    .option('--artifacts <where>', "where artifacts' bytes go: postgresql (the store) or s3://BUCKET[/PREFIX] (keys from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)", process.env.SPOOL_ARTIFACTS)
    .option('--s3-endpoint <url>', 'an S3-compatible server (MinIO, versitygw, Ceph...) instead of AWS S3', process.env.SPOOL_S3_ENDPOINT)
    .option('--s3-region <region>', "the bucket's region (default $AWS_REGION or us-east-1)");
}

function build(setExit: (code: number) => void): Command {
  const program = new Command('spool')
    .description('Durable workflows as ordinary scripts')
    .exitOverride()
    .configureOutput({
      outputError: (text, write) => write(`spool: ${text.split('\n')[0]?.replace(/^error: /, '') ?? text}\n`),
    });

  storeOptions(
    program
      .command('run <file>')
      .description('run a script to the end on the local store, through as many passes as it needs')
      .option('--input <json>', 'the input the script reads from $SPOOL_INPUT_FILE')
      .option('--project <name>', 'project the run belongs to', 'default')
      .option('--lenient', 'do not fail a run whose replay reaches a different call')
      .option('--max-result-bytes <n>', 'largest recorded result (default 1 MiB)', process.env.SPOOL_MAX_RESULT_BYTES)
      .option('--with <dir>', "bundle the files under DIR (minus .gitignore's) with the run, for 'spool checkout'")
      .option('--fresh-dir', 'run each pass in a new, empty working directory, as each pass on a cluster is a new pod'),
  ).action(async (file: string, options: Record<string, string | boolean | undefined>) => {
    const { runLocal } = await import('../../dev/run-local.js');
    setExit(await runLocal(file, options));
  });

  program
    .command('test <files...>')
    .description('run workflows against their test files (NAME.test.yaml) on an in-memory store with a virtual clock: a 14-day sleep returns at once')
    .option('--junit <file>', 'also write a JUnit XML report to FILE')
    .option('--json', "print each case's result as JSON")
    .option('--case <yaml>', "the cases (YAML or JSON) instead of the workflow's test file")
    .option('--fresh-dir', 'run each pass in a new, empty working directory, as each pass on a cluster is a new pod')
    .action(async (files: string[], options: { junit?: string; json?: boolean; case?: string; freshDir?: boolean }) => {
      const { testWorkflows } = await import('../../testing/test-command.js');
      setExit(await testWorkflows(files, options));
    });

  storeOptions(
    program
      .command('resume <run>')
      .description('carry on a local run whose runner stopped, replaying its journal')
      .option('--lenient', 'do not fail a run whose replay reaches a different call')
      .option('--fresh-dir', 'run each pass in a new, empty working directory, as each pass on a cluster is a new pod'),
  ).action(async (runId: string, options: Record<string, string | boolean | undefined>) => {
    const { resumeLocal } = await import('../../dev/run-local.js');
    setExit(await resumeLocal(runId, options));
  });

  storeOptions(
    program
      .command('dev')
      .description('serve the HTTP API and run passes locally, until stopped')
      .option('--port <port>', 'port on 127.0.0.1', '7456')
      .option('--project <name>', 'default project', 'default')
      .option('--chat <file>', 'approval gates in Slack and Mattermost: a JSON file of tokens and people (docs/ui.md); default $SPOOL_CHAT')
      .option('--fresh-dir', 'run each pass in a new, empty working directory, as each pass on a cluster is a new pod'),
  ).action(async (options: Record<string, string | undefined>) => {
    const { startDevServer } = await import('../../dev/dev-server.js');
    const port = Number(options.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--port takes a port number, not '${options.port ?? ''}'`);
    const chat = await chatOption(options.chat ?? process.env.SPOOL_CHAT);
    const server = await startDevServer({ ...options, port, ...(chat ? { chat } : {}) });
    process.stderr.write(`  spool dev listening on ${server.url}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
  });

  program
    .command('doctor')
    .description('say what scripts get here: which in-script client, which interpreters')
    .action(async () => {
      const { doctor } = await import('./doctor.js');
      process.stdout.write(`${doctor().join('\n')}\n`);
    });

  program
    .command('completion <shell>')
    .description('print a script that completes spool in bash, zsh or fish (source <(spool completion bash))')
    .action(async (shell: string) => {
      const { completionScript } = await import('./completion.js');
      process.stdout.write(completionScript(shell, program));
    });

  registerServerCommands(program, setExit);
  registerUiCommand(program);
  registerClusterInternals(program, setExit);
  // A group named without one of its commands (`spool handler`) is bad input like any other: one
  // line saying what it takes, not the help (which `--help` still prints).
  for (const group of program.commands.filter((command) => command.commands.length > 0)) {
    const names = group.commands.map((command) => command.name()).join(', ');
    group.argument('[command]').action((name: string | undefined) => {
      throw new UsageError(name === undefined ? `${group.name()} needs a command: ${names}` : `unknown command '${group.name()} ${name}' (${group.name()} takes ${names})`);
    });
  }
  return program;
}

/**
 * A reader that stops early (`spool runs | head -1`, `spool logs --follow | grep -m1 x`) closes the
 * pipe: exit quietly as coreutils do when SIGPIPE ends them (128 + 13 = 141), not with a stack trace
 * from an unhandled EPIPE.
 */
function quitWhenReaderGoes(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(128 + constants.signals.SIGPIPE);
  });
}

export async function runControl(args: string[]): Promise<number> {
  quitWhenReaderGoes();
  let code: number = EXIT.ok;
  const program = build((value) => (code = value));
  try {
    await program.parseAsync(args, { from: 'user' });
    return code;
  } catch (raw) {
    if (raw instanceof CommanderError) {
      return raw.code === 'commander.helpDisplayed' || raw.code === 'commander.version' ? EXIT.ok : EXIT.usage;
    }
    const error = ensureError(raw);
    process.stderr.write(`spool: ${oneLine(error.message)}\n`);
    return exitCodeOf(error);
  }
}
