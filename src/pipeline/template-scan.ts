import { ExpressionError } from './expression-error.js';

/** A piece of a string that may embed `${{ }}` expressions. Offsets are into that string. */
export type TemplatePart =
  | { kind: 'text'; text: string; at: number }
  | {
      kind: 'expr';
      /** The expression between the braces, untrimmed. */
      source: string;
      /** Offset of `${{`. */
      at: number;
      /** Offset of `source`, just after `${{`. */
      sourceAt: number;
      /** Offset just after `}}`. */
      end: number;
    };

const OPEN = '${{';
const CLOSE = '}}';

/**
 * Splits a string into text and `${{ }}` parts. The closing `}}` is the first one outside a
 * quoted string, so `${{ input.x == '}}' }}` holds one expression. There is no escape for a
 * literal `${{`: nothing in a shell command or a prompt needs one.
 */
export function scanTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let textStart = 0;
  for (let open = template.indexOf(OPEN); open !== -1; open = template.indexOf(OPEN, textStart)) {
    if (open > textStart) parts.push({ kind: 'text', text: template.slice(textStart, open), at: textStart });
    const sourceAt = open + OPEN.length;
    const close = findClose(template, sourceAt);
    if (close === -1) throw new ExpressionError("'${{' is never closed; expected '}}'", open, template);
    parts.push({
      kind: 'expr',
      source: template.slice(sourceAt, close),
      at: open,
      sourceAt,
      end: close + CLOSE.length,
    });
    textStart = close + CLOSE.length;
  }
  if (textStart < template.length) parts.push({ kind: 'text', text: template.slice(textStart), at: textStart });
  return parts;
}

/** The offset of the `}}` that ends an expression starting at `from`, or -1. */
function findClose(text: string, from: number): number {
  let quote: string | null = null;
  for (let i = from; i < text.length; i++) {
    const char = text[i];
    if (quote !== null) {
      if (char === '\\') i++;
      else if (char === quote) quote = null;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (text.startsWith(CLOSE, i)) {
      return i;
    }
  }
  return -1;
}

/** The one expression part of a string that is exactly one `${{ }}` (blank around it is fine), or null. */
export function soleExpression(text: string): Extract<TemplatePart, { kind: 'expr' }> | null {
  let parts: TemplatePart[];
  try {
    parts = scanTemplate(text);
  } catch (error) {
    if (error instanceof ExpressionError) return null;
    throw error;
  }
  const meaningful = parts.filter((part) => part.kind === 'expr' || part.text.trim() !== '');
  const [only] = meaningful;
  return meaningful.length === 1 && only?.kind === 'expr' ? only : null;
}

/** True for a string that is exactly one `${{ }}` expression, such as an `if:`. */
export function isExpression(text: string): boolean {
  return soleExpression(text) !== null;
}
