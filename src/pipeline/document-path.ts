import type { DocumentPath } from './problem.js';

/**
 * Ajv's instancePath (`/jobs/ask/steps/0`) as keys, numbers where the data holds a list, since a
 * job or key could itself be named "0".
 */
export function pathFromPointer(pointer: string, data: unknown): (string | number)[] {
  if (pointer === '') return [];
  const path: (string | number)[] = [];
  let value = data;
  for (const escaped of pointer.slice(1).split('/')) {
    const segment = escaped.replaceAll('~1', '/').replaceAll('~0', '~');
    const key = Array.isArray(value) ? Number(segment) : segment;
    path.push(key);
    value = valueAt(value, [key]);
  }
  return path;
}

/** The value at a path, or undefined where there is none. */
export function valueAt(data: unknown, path: DocumentPath): unknown {
  let value = data;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

/** `fan_out.steps[0].run`: a path as someone would point at it in the document. */
export function formatPath(path: DocumentPath): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? key : `.${key}`)).join('');
}

/** Where a key sits, for "unknown key 'x' in job 'ask'" and "missing key 'prompt' in 'approval' of job 'ask'". */
export function where(path: DocumentPath): string {
  const [top, job, ...rest] = path;
  if (top === undefined) return 'at the top level';
  if (top !== 'jobs' || job === undefined) return `in '${formatPath(path)}'`;
  return rest.length === 0 ? `in job '${String(job)}'` : `in '${formatPath(rest)}' of job '${String(job)}'`;
}

/** What a value is called in messages: 'timeout', entry 2 of 'steps', job 'ask'. The line and column say where. */
export function subject(path: DocumentPath): string {
  const last = path.at(-1);
  if (last === undefined) return 'the document';
  if (path.length === 2 && path[0] === 'jobs') return `job '${String(last)}'`;
  if (path.length === 2 && path[0] === 'outputs') return `output '${String(last)}'`;
  if (typeof last === 'number') return `entry ${last + 1} of '${String(path.at(-2))}'`;
  return `'${last}'`;
}
