import { UsageError } from '../../common/errors.js';
import type { Store } from '../../store/store.js';
import type { PassState as Pass } from '../pass-state.js';
import type { Answer, StateRequest } from '../protocol.js';
import { EXIT } from '../protocol.js';
import { OK, textAnswer } from './answers.js';

/** Answers of add/incr/cas are recorded: a replay must get the answer the first pass got. */
const RECORDED_OPS = ['state.incr', 'state.cas'] as const;

export async function state(pass: Pass, request: StateRequest): Promise<Answer> {
  const { store, run } = pass;
  const scope = pass.scope(request.entity);
  const entityField = request.entity ? { entity: request.entity } : {};
  switch (request.verb) {
    case 'state.get':
      return textAnswer((await store.getCell(run.project, scope, request.key))?.value ?? '');
    case 'state.set':
      await store.setCell(run.project, scope, request.key, request.value);
      return OK;
    case 'state.delete':
      await store.deleteCell(run.project, scope, request.key);
      return OK;
    case 'state.version':
      return textAnswer(String((await store.getCell(run.project, scope, request.key))?.version ?? 0));
    case 'state.list': {
      const cells = await store.listCells(run.project, scope, request.prefix);
      return { status: 'ok', stdout: cells.map((cell) => `${cell.key}\t${cell.value}\n`).join(''), exitCode: 0 };
    }
    case 'state.add': {
      const reached = pass.take(pass.peek('state.add', request.key));
      if (reached.result) return claimAnswer(Boolean(reached.result.data.won), true);
      const won = await store.transaction(async (tx) => {
        const claimed = await tx.addCell(run.project, scope, request.key, request.value ?? run.id);
        if (!reached.call) await pass.record(reached, 'call', entityField, tx);
        await pass.record(reached, 'result', { won: claimed }, tx);
        return claimed;
      });
      return claimAnswer(won, false);
    }
    case 'state.incr':
    case 'state.cas': {
      const op = request.op ?? request.key;
      if (request.verb === 'state.incr' && !pass.recordedNext(request.verb, op)) await refuseUncountable(store, run.project, scope, request.key);
      const reached = pass.peek(request.verb, op, (position) => {
        const other = pass.findRecorded(RECORDED_OPS, op, position);
        if (other) {
          pass.refuse(
            `--op '${op}' is already used in this run (call ${other.position + 1}); each incr or cas is its own ` +
              `question, so give each one its own --op name`,
          );
        }
      });
      if (reached.result) return opAnswer(pass.take(reached).result?.data ?? {}, true);
      const result = await store.transaction(async (tx) => {
        const data =
          request.verb === 'state.incr'
            ? { value: await incremented(tx, run.project, scope, request.key, request.by) }
            : { won: await tx.casCell(run.project, scope, request.key, request.expected, request.value) };
        if (!reached.call) await pass.record(reached, 'call', { key: request.key, ...entityField }, tx);
        return pass.record(reached, 'result', data, tx);
      });
      // Taken once recorded: a refused incr (a cell that is not a number) takes no position.
      pass.take(reached);
      return opAnswer(result.data, false);
    }
  }
}

/** What the store's incrCell counts: a whole number, written in decimal. */
const WHOLE_NUMBER = /^-?[0-9]+$/;

/**
 * Refuses an incr of a cell that holds anything but a whole number before the journal is asked, so
 * a script that caught the refusal meets the same refusal on every pass, not a determinism error.
 */
async function refuseUncountable(store: Store, project: string, scope: string, key: string): Promise<void> {
  const held = (await store.getCell(project, scope, key))?.value;
  if (held !== undefined && !WHOLE_NUMBER.test(held)) throw uncountable(key, held);
}

function uncountable(key: string, held: string): UsageError {
  return new UsageError(
    `state cell '${key}' holds '${held.length > 40 ? `${held.slice(0, 40)}...` : held}', not a whole number; incr only counts whole numbers`,
  );
}

/** The counter's new value; a cell that changed to text since the check above still refuses, unchanged. */
async function incremented(tx: Store, project: string, scope: string, key: string, by: number): Promise<string> {
  const cell = await tx.incrCell(project, scope, key, by);
  if (cell) return cell.value;
  throw uncountable(key, (await tx.getCell(project, scope, key))?.value ?? '');
}

/** A taken key exits 3 and prints nothing: the script says what that means for it. */
function claimAnswer(won: boolean, replayed: boolean): Answer {
  return { status: 'ok', exitCode: won ? 0 : EXIT.taken, replayed };
}

function opAnswer(data: Record<string, unknown>, replayed: boolean): Answer {
  if ('value' in data) return textAnswer(String(data.value), replayed);
  return claimAnswer(Boolean(data.won), replayed);
}
