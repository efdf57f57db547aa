import type { Answer } from '../protocol.js';

/** A recorded command result (step, locked section, activity) as the client prints it. */
export function commandAnswer(data: Record<string, unknown>, replayed: boolean): Answer {
  return {
    status: 'ok',
    ...(typeof data.stdoutBase64 === 'string' ? { stdoutBase64: data.stdoutBase64 } : { stdout: String(data.stdout ?? '') }),
    exitCode: Number(data.exitCode ?? 0),
    ...(typeof data.stderr === 'string' ? { stderr: data.stderr } : {}),
    replayed,
  };
}

export function textAnswer(text: string, replayed = false): Answer {
  return { status: 'ok', stdout: text === '' ? '' : `${text}\n`, exitCode: 0, replayed };
}

export type OkAnswer = Extract<Answer, { status: 'ok' }>;

export const OK: OkAnswer = { status: 'ok', exitCode: 0 };
