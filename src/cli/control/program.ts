import { Command, CommanderError, Option } from 'commander';
import { SpoolError, ensureError } from '../../common/errors.js';
import { EXIT } from '../../engine/protocol.js';

function storeOptions(command: Command): Command {
  return command
    .addOption(new Option('--data-dir <dir>', 'where the embedded store keeps its files').default('.spool'))
    .option('--database-url <url>', 'a PostgreSQL server to use instead of the embedded store', process.env.SPOOL_DATABASE_URL);
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
      .option('--max-result-bytes <n>', 'largest recorded result (default 1 MiB)', process.env.SPOOL_MAX_RESULT_BYTES),
  ).action(async (file: string, options: Record<string, string | boolean | undefined>) => {
    const { runLocal } = await import('../../dev/run-local.js');
    setExit(await runLocal(file, options));
  });

  storeOptions(
    program
      .command('resume <run>')
      .description('carry on a local run whose runner stopped, replaying its journal')
      .option('--lenient', 'do not fail a run whose replay reaches a different call'),
  ).action(async (runId: string, options: Record<string, string | boolean | undefined>) => {
    const { resumeLocal } = await import('../../dev/run-local.js');
    setExit(await resumeLocal(runId, options));
  });

  return program;
}

export async function runControl(args: string[]): Promise<number> {
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
    process.stderr.write(`spool: ${error.message}\n`);
    return error instanceof SpoolError && error.code === 'usage' ? EXIT.usage : EXIT.failure;
  }
}
