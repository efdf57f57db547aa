import { jsonOrText, ok, text } from './answers.js';
import { requireAgent } from './capabilities.js';
import { send } from './connection.js';
import { ScriptError } from './errors.js';
import { asStoredText } from './json.js';
import { EXIT_TAKEN } from './protocol.js';

/**
 * State cells (docs/sdks.md, "State values"). Without `entity` a cell is private to this run; with
 * one it is the project's, shared by every run. A string is stored as it is, any other value as its
 * JSON; reading gives back the JSON value when the text parses as JSON, else the text.
 */
export interface StateOptions {
  entity?: string;
}

const scope = (options: StateOptions): { entity?: string } => (options.entity === undefined ? {} : { entity: options.entity });

/** The cell's value, or null when it is absent (or empty: the agent answers both alike). */
export async function stateGet<T = unknown>(key: string, options: StateOptions = {}): Promise<T | null> {
  const value = text(await ok(await send({ verb: 'state.get', key, ...scope(options) })));
  return (value === '' ? null : jsonOrText(value)) as T | null;
}

export async function stateSet(key: string, value: unknown, options: StateOptions = {}): Promise<void> {
  const stored = asStoredText(value, `state_set '${key}'`);
  await ok(await send({ verb: 'state.set', key, value: stored, ...scope(options) }));
}

/**
 * Sets the cell only if it is absent, durably (a replay answers as the first pass did); returns
 * whether this call added it.
 */
export async function stateAdd(key: string, options: StateOptions & { value?: unknown } = {}): Promise<boolean> {
  const value = options.value === undefined ? {} : { value: asStoredText(options.value, `state_add '${key}'`) };
  await requireAgent('state_add', 'state.add');
  const answer = await ok(await send({ verb: 'state.add', key, ...value, ...scope(options) }));
  if (answer.exitCode === EXIT_TAKEN) return false;
  if ((answer.exitCode ?? 0) === 0) return true;
  throw new ScriptError('internal', `state_add '${key}': the agent answered exit code ${String(answer.exitCode)}`);
}

export async function stateDelete(key: string, options: StateOptions = {}): Promise<void> {
  await ok(await send({ verb: 'state.delete', key, ...scope(options) }));
}

/** Every cell (whose key starts with `prefix`), key to value. */
export async function stateList(options: StateOptions & { prefix?: string } = {}): Promise<Record<string, unknown>> {
  const prefix = options.prefix === undefined ? {} : { prefix: options.prefix };
  const listing = text(await ok(await send({ verb: 'state.list', ...prefix, ...scope(options) })));
  const cells: Record<string, unknown> = {};
  for (const line of listing.split('\n')) {
    if (line === '') continue;
    const tab = line.indexOf('\t');
    if (tab < 0) cells[line] = null;
    else cells[line.slice(0, tab)] = jsonOrText(line.slice(tab + 1));
  }
  return cells;
}
