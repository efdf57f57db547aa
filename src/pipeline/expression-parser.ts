import { ExpressionError } from './expression-error.js';
import { tokenize, type Operator, type Token } from './expression-lexer.js';
import { scanTemplate, soleExpression } from './template-scan.js';

/*
 * Grammar, loosest first:
 *   or      := and ('||' and)*
 *   and     := compare ('&&' compare)*
 *   compare := unary (('==' | '!=') unary)*
 *   unary   := '!' unary | primary
 *   primary := literal | path | '(' or ')'
 *   path    := ('input' | 'steps' | 'item') ('.' name | '[' string-or-number ']')*
 * A path is a flat list of keys, so what an expression reads is known without running it:
 * parse.ts checks every steps.<job> against the graph before a run starts.
 */

export type Literal = string | number | boolean | null;
export type PathRoot = 'input' | 'steps' | 'item' | 'nodes' | 'node' | 'index';
export type BinaryOperator = '&&' | '||' | '==' | '!=';

export type Expr =
  | { kind: 'literal'; value: Literal; at: number }
  | {
      kind: 'path';
      root: PathRoot;
      keys: (string | number)[];
      at: number;
      /** The path as written, for messages: `steps.ask.output.timed_out`. */
      text: string;
    }
  | { kind: 'not'; operand: Expr; at: number }
  | { kind: 'binary'; op: BinaryOperator; left: Expr; right: Expr; at: number };

/** The names a document's expressions may start from: a pipeline's, or a graph's (docs/graphs.md). */
export interface Names {
  roots: readonly PathRoot[];
  /** What they read, for the message about a name that is none of them. */
  described: string;
}

export const PIPELINE_NAMES: Names = {
  roots: ['input', 'steps', 'item'],
  described: 'input.<key>, steps.<job>.output.<key>, steps.<job>.status and item',
};

export const GRAPH_NAMES: Names = {
  roots: ['input', 'nodes', 'node', 'item', 'index'],
  described: 'input.<key>, nodes.<id>.output, nodes.<id>.status, node.id, node.idempotency_key, item and index',
};
const KEYWORDS: Record<string, Literal> = { true: true, false: false, null: null };

/**
 * Parses one expression: either the bare text (`steps.ask.output.timed_out`) or a string that is
 * exactly one `${{ }}`. Offsets in the tree and in a thrown ExpressionError are into `src`.
 */
export function parseExpression(src: string, names: Names = PIPELINE_NAMES): Expr {
  const sole = soleExpression(src);
  if (sole) return parseExpressionAt(src, sole.sourceAt, sole.sourceAt + sole.source.length, names);
  if (src.includes('${{')) {
    // scanTemplate throws for an unclosed `${{`; otherwise there is text, or a second `${{ }}`, around it.
    const [first] = scanTemplate(src).filter((part) => part.kind === 'expr');
    throw new ExpressionError('expected exactly one ${{ }} expression, with nothing around it', first?.at ?? 0, src);
  }
  return parseExpressionAt(src, 0, src.length, names);
}

/** Parses `text[start, end)`, such as one `${{ }}` of a template, keeping offsets into `text`. */
export function parseExpressionAt(text: string, start: number, end: number, names: Names = PIPELINE_NAMES): Expr {
  return new Parser(text, tokenize(text, start, end), names).parseAll();
}

/**
 * How deep `(` and `!` may nest (docs/limits.md): the parser and the evaluator recurse, and an
 * expression 2,000 deep ended in "Maximum call stack size exceeded" instead of a line and column.
 */
export const MAX_EXPRESSION_DEPTH = 32;

class Parser {
  private index = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
    private readonly names: Names,
  ) {}

  parseAll(): Expr {
    if (this.peek().type === 'end') this.fail('empty expression; expected a value such as input.name', this.peek());
    const expr = this.or();
    const rest = this.peek();
    if (rest.type !== 'end')
      this.fail(`unexpected ${describe(rest)}; expected '&&', '||', '==', '!=' or the end`, rest);
    return expr;
  }

  private or(): Expr {
    let left = this.and();
    for (let op = this.take('||'); op; op = this.take('||'))
      left = { kind: 'binary', op: '||', left, right: this.and(), at: op.at };
    return left;
  }

  private and(): Expr {
    let left = this.compare();
    for (let op = this.take('&&'); op; op = this.take('&&'))
      left = { kind: 'binary', op: '&&', left, right: this.compare(), at: op.at };
    return left;
  }

  private compare(): Expr {
    let left = this.unary();
    for (let op = this.take('==') ?? this.take('!='); op; op = this.take('==') ?? this.take('!=')) {
      left = { kind: 'binary', op: op.value === '==' ? '==' : '!=', left, right: this.unary(), at: op.at };
    }
    return left;
  }

  private unary(): Expr {
    const bang = this.take('!');
    if (!bang) return this.primary();
    return this.nested(bang, () => ({ kind: 'not', operand: this.unary(), at: bang.at }));
  }

  private nested(token: Token, parse: () => Expr): Expr {
    if (++this.depth > MAX_EXPRESSION_DEPTH) this.fail(`nested more than ${MAX_EXPRESSION_DEPTH} deep; write it flatter`, token);
    try {
      return parse();
    } finally {
      this.depth -= 1;
    }
  }

  private primary(): Expr {
    const token = this.next();
    switch (token.type) {
      case 'string':
      case 'number':
        return { kind: 'literal', value: token.value, at: token.at };
      case 'ident':
        if (Object.hasOwn(KEYWORDS, token.value))
          return { kind: 'literal', value: KEYWORDS[token.value] ?? null, at: token.at };
        return this.path(token);
      case 'op':
        if (token.value === '(') {
          return this.nested(token, () => {
            const inner = this.or();
            if (!this.take(')')) this.fail(`unclosed '('; expected ')' before ${describe(this.peek())}`, this.peek());
            return inner;
          });
        }
        return this.fail(`unexpected ${describe(token)}; expected a value`, token);
      case 'end': {
        const before = this.tokens[this.index - 1];
        const after = before?.type === 'op' ? ` after '${before.value}'` : '';
        return this.fail(`expected a value${after}, found the end`, token);
      }
    }
  }

  private path(root: Extract<Token, { type: 'ident' }>): Expr {
    if (!(this.names.roots as readonly string[]).includes(root.value)) {
      this.fail(`unknown name '${root.value}'; expressions read ${this.names.described}`, root);
    }
    const keys: (string | number)[] = [];
    const keyTokens: Token[] = [];
    let last: Token = root;
    for (;;) {
      if (this.take('.')) {
        const name = this.next();
        if (name.type !== 'ident') this.fail(`expected a name after '.', found ${describe(name)}`, name);
        keys.push(name.value);
        keyTokens.push(name);
        last = name;
      } else if (this.take('[')) {
        const key = this.next();
        if (key.type !== 'string' && key.type !== 'number')
          this.fail(`expected a quoted key or an index after '[', found ${describe(key)}`, key);
        keys.push(key.value);
        keyTokens.push(key);
        last = this.expect(']');
      } else {
        break;
      }
    }
    const text = this.text.slice(root.at, last.at + tokenLength(last));
    if (root.value === 'steps') this.checkStepsPath(keys, keyTokens, root);
    return { kind: 'path', root: root.value as PathRoot, keys, at: root.at, text };
  }

  /** steps.<job>.output[.<key>...] or steps.<job>.status: the only things a job exposes. */
  private checkStepsPath(keys: (string | number)[], keyTokens: Token[], root: Token): void {
    const [job, field] = keys;
    if (typeof job !== 'string')
      this.fail('expected steps.<job>.output.<key> or steps.<job>.status', keyTokens[0] ?? this.peek());
    if (field !== 'output' && field !== 'status') {
      const at = keyTokens[1] ?? this.peek();
      this.fail(
        `expected steps.${job}.output.<key> or steps.${job}.status${field === undefined ? '' : `, found '${field}'`}`,
        at,
      );
    }
    if (field === 'status' && keys.length > 2)
      this.fail(`steps.${job}.status is a string; it has no '${String(keys[2])}'`, keyTokens[2] ?? root);
  }

  private peek(): Token {
    // tokenize() always ends with an 'end' token, and next() never moves past it.
    return this.tokens[this.index] ?? { type: 'end', at: this.text.length };
  }

  private next(): Token {
    const token = this.peek();
    if (token.type !== 'end') this.index++;
    return token;
  }

  private take(op: Operator): Extract<Token, { type: 'op' }> | null {
    const token = this.peek();
    if (token.type === 'op' && token.value === op) {
      this.index++;
      return token;
    }
    return null;
  }

  private expect(op: Operator): Token {
    const token = this.take(op);
    return token ?? this.fail(`expected '${op}', found ${describe(this.peek())}`, this.peek());
  }

  private fail(reason: string, token: Token): never {
    throw new ExpressionError(reason, token.at, this.text);
  }
}

function describe(token: Token): string {
  switch (token.type) {
    case 'end':
      return 'the end';
    case 'ident':
      return `'${token.value}'`;
    case 'op':
      return `'${token.value}'`;
    default:
      return token.raw;
  }
}

function tokenLength(token: Token): number {
  switch (token.type) {
    case 'ident':
      return token.value.length;
    case 'op':
      return token.value.length;
    case 'string':
    case 'number':
      return token.raw.length;
    case 'end':
      return 0;
  }
}
