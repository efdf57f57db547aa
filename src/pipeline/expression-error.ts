import { UsageError } from '../common/errors.js';

/**
 * A `${{ }}` expression that does not parse. It keeps the reason and the offset apart from the
 * message so parse.ts can turn the offset into a line and column of the YAML file; on its own
 * (an engine evaluating a stored condition) the message says the column within the text.
 */
export class ExpressionError extends UsageError {
  constructor(
    /** What was expected, without position: "expected a value after '&&'". */
    readonly reason: string,
    /** Offset within `source` of the token at fault. */
    readonly offset: number,
    /** The text that was being parsed (a whole template or a single expression). */
    readonly source: string,
  ) {
    super(`${reason} (column ${offset + 1} of '${source}')`);
  }
}
