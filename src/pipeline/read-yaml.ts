import type { YAMLError } from 'yaml';
import { yaml } from '../common/yaml.js';
import { usageAt, type YamlSource } from './source-location.js';

/**
 * Parses a pipeline file, keeping the syntax tree and line offsets so later checks can say where.
 * A syntax error is refused here with its line and column; parsing goes on after YAML's first
 * error, but the first is the one worth fixing.
 */
export function readYaml(text: string, file: string): YamlSource {
  const lineCounter = new (yaml().LineCounter)();
  // logLevel 'error': a map or list used as a key is stringified by toJS and refused as an unknown
  // key; the library's warning about it would be a second and third line on stderr.
  const document = yaml().parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, logLevel: 'error' });
  const [error] = document.errors;
  if (error) throw usageAt(file, lineCounter, error.pos[0], describe(error, text));
  let data: unknown;
  try {
    data = document.toJS();
  } catch (cause) {
    // Only aliases can fail here (too many, or one that expands to itself).
    throw usageAt(file, lineCounter, 0, `bad YAML: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
  return { file, text, document, lineCounter, data };
}

function describe(error: YAMLError, text: string): string {
  switch (error.code) {
    case 'DUPLICATE_KEY': {
      const key = /^[^:\n]*/.exec(text.slice(error.pos[0]))?.[0].trim() ?? '';
      return `duplicate key '${key}'; each key may appear once in a map`;
    }
    case 'MULTIPLE_DOCS':
      return "a pipeline file holds one YAML document; remove the '---' that starts a second";
    default:
      return `bad YAML: ${error.message}`;
  }
}
