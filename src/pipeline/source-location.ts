import type { Document, LineCounter, Node, Scalar } from 'yaml';
import { yaml } from '../common/yaml.js';
import { UsageError } from '../common/errors.js';
import { oneLine } from '../common/one-line.js';
import type { PipelineProblem } from './problem.js';

/** A parsed YAML file, kept whole so problems found in its data can be traced back to the text. */
export interface YamlSource {
  file: string;
  text: string;
  document: Document.Parsed;
  lineCounter: LineCounter;
  data: unknown;
}

/** `<file>:<line>:<col>: <message>`, the one line an editor or a terminal can jump to. */
export function usageAt(file: string, lineCounter: LineCounter, offset: number, message: string): UsageError {
  const { line, col } = lineCounter.linePos(offset);
  return new UsageError(`${file}:${line}:${col}: ${oneLine(message)}`);
}

/** The problem as a UsageError pointing at the node (or the character in a string) it is about. */
export function locateProblem(source: YamlSource, problem: PipelineProblem): UsageError {
  return usageAt(source.file, source.lineCounter, offsetOf(source, problem), problem.message);
}

function offsetOf(source: YamlSource, problem: PipelineProblem): number {
  const { found, nodes } = walk(source.document, problem.path);
  const last = nodes.at(-1);
  // A path can end where the YAML has nothing (a default, depends_on: x read as [x]): show the nearest node.
  if (!found || !last) return start(last?.value ?? last?.key) ?? start(source.document.contents) ?? 0;
  // A key, or the key that holds a map: a map's own start is its first key, which says less.
  if (problem.target !== 'value') return start(last.key ?? last.value) ?? 0;
  const value = last.value;
  if (problem.offset !== undefined && yaml().isScalar(value))
    return offsetInScalar(source.text, value, problem.offset) ?? start(value) ?? 0;
  return start(value ?? last.key) ?? 0;
}

interface Hop {
  /** The key node for a map entry; null for a list item. */
  key: Node | null;
  value: Node | null;
}

/** Follows a path through maps, lists and aliases; `found` is false if it stopped short. */
function walk(document: Document.Parsed, path: readonly (string | number)[]): { found: boolean; nodes: Hop[] } {
  const nodes: Hop[] = [];
  let node: unknown = document.contents;
  for (const key of path) {
    if (yaml().isAlias(node)) node = node.resolve(document);
    if (yaml().isMap(node)) {
      const pair = node.items.find((item) => keyText(item.key) === String(key));
      if (!pair) return { found: false, nodes };
      nodes.push({ key: pair.key as Node, value: (pair.value as Node | null) ?? null });
      node = pair.value;
    } else if (yaml().isSeq(node) && typeof key === 'number' && node.items[key] !== undefined) {
      nodes.push({ key: null, value: node.items[key] as Node });
      node = node.items[key];
    } else {
      return { found: false, nodes };
    }
  }
  return { found: true, nodes };
}

/** A key as the data knows it: a scalar's value, or a map or list as toJS writes it (`[ a ]`). */
function keyText(key: unknown): string {
  if (yaml().isScalar(key)) return String(key.value);
  const alone = new (yaml().Document)();
  alone.contents = key as Node;
  return alone.toString().trimEnd();
}

function start(node: unknown): number | null {
  return node && typeof node === 'object' && 'range' in node && Array.isArray(node.range)
    ? Number(node.range[0])
    : null;
}

/**
 * Where character `offset` of a string scalar's value is in the file, when the text up to it is
 * written verbatim: a plain or quoted one-line scalar, or any line of a `|` block. Null otherwise
 * (escapes, folded lines), and the caller points at the scalar's start instead.
 */
function offsetInScalar(text: string, node: Scalar, offset: number): number | null {
  const value = typeof node.value === 'string' ? node.value : null;
  const begin = node.range?.[0];
  if (value === null || begin === undefined) return null;
  const before = value.slice(0, offset).split('\n');
  const line = before.length - 1;
  const column = (before.at(-1) ?? '').length;
  switch (node.type) {
    case 'PLAIN':
    case 'QUOTE_SINGLE':
    case 'QUOTE_DOUBLE': {
      const contentStart = begin + (node.type === 'PLAIN' ? 0 : 1);
      return line === 0 && text.slice(contentStart, contentStart + offset) === value.slice(0, offset)
        ? contentStart + offset
        : null;
    }
    case 'BLOCK_LITERAL': {
      // The header (`|`, `|-`...) ends its line; then each line of the value is one line of the file.
      let lineStart = text.indexOf('\n', begin) + 1;
      for (let i = 0; i < line && lineStart > 0; i++) lineStart = text.indexOf('\n', lineStart) + 1;
      if (lineStart <= 0) return null;
      const lineEnd = text.indexOf('\n', lineStart);
      const sourceLine = text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd);
      const valueLine = value.split('\n')[line] ?? '';
      return sourceLine.endsWith(valueLine) ? lineStart + sourceLine.length - valueLine.length + column : null;
    }
    default:
      return null;
  }
}
