import { ExpressionError } from './expression-error.js';

export type Operator = '(' | ')' | '[' | ']' | '.' | '!' | '==' | '!=' | '&&' | '||';

export type Token =
  | { type: 'ident'; value: string; at: number }
  | { type: 'string'; value: string; at: number; raw: string }
  | { type: 'number'; value: number; at: number; raw: string }
  | { type: 'op'; value: Operator; at: number }
  | { type: 'end'; at: number };

const OPERATORS: readonly Operator[] = ['==', '!=', '&&', '||', '(', ')', '[', ']', '.', '!'];
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /-?[0-9]+(?:\.[0-9]+)?/y;
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r' };

/** Near misses get a hint, since they are what people type from other languages. */
const HINTS: Record<string, string> = {
  '=': "use '==' to compare",
  '&': "use '&&' for and",
  '|': "use '||' for or",
  '-': "'-' is not an operator here; job names in expressions use underscores (ask_lead, not ask-lead)",
};

/**
 * Splits `text[start, end)` into tokens whose offsets are into `text`, so an error can point at
 * the column of the whole string it was written in.
 */
export function tokenize(text: string, start = 0, end = text.length): Token[] {
  const fail = (reason: string, at: number): never => {
    throw new ExpressionError(reason, at, text);
  };
  const tokens: Token[] = [];
  let i = start;
  while (i < end) {
    const char = text[i] ?? '';
    if (/\s/.test(char)) {
      i++;
      continue;
    }
    IDENT.lastIndex = i;
    const ident = IDENT.exec(text);
    if (ident && i + ident[0].length <= end) {
      tokens.push({ type: 'ident', value: ident[0], at: i });
      i += ident[0].length;
      continue;
    }
    // A minus sign only starts a number where a value is expected, never after a name.
    const previous = tokens.at(-1);
    const valueExpected =
      previous === undefined || (previous.type === 'op' && previous.value !== ')' && previous.value !== ']');
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number && i + number[0].length <= end && (char !== '-' || valueExpected)) {
      tokens.push({ type: 'number', value: Number(number[0]), at: i, raw: number[0] });
      i += number[0].length;
      continue;
    }
    if (char === "'" || char === '"') {
      const { value, next } = readString(text, i, end, fail);
      tokens.push({ type: 'string', value, at: i, raw: text.slice(i, next) });
      i = next;
      continue;
    }
    const op = OPERATORS.find((candidate) => text.startsWith(candidate, i) && i + candidate.length <= end);
    if (op) {
      tokens.push({ type: 'op', value: op, at: i });
      i += op.length;
      continue;
    }
    fail(HINTS[char] ?? `unexpected character '${char}'`, i);
  }
  tokens.push({ type: 'end', at: end });
  return tokens;
}

/** A quoted string, 'single' or "double", with backslash escapes as in JavaScript. */
function readString(
  text: string,
  at: number,
  end: number,
  fail: (reason: string, at: number) => never,
): { value: string; next: number } {
  const quote = text[at];
  let value = '';
  for (let i = at + 1; i < end; i++) {
    const char = text[i] ?? '';
    if (char === quote) return { value, next: i + 1 };
    if (char === '\\' && i + 1 < end) {
      const escaped = text[++i] ?? '';
      value += ESCAPES[escaped] ?? escaped;
    } else {
      value += char;
    }
  }
  return fail(`unclosed string; expected a closing ${quote}`, at);
}
