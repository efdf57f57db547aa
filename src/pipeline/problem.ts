/** Where in the document a problem is, as keys from the root: ['jobs', 'ask', 'approval', 'timeout']. */
export type DocumentPath = readonly (string | number)[];

/**
 * A problem found in a pipeline document, located by path rather than by line: the checks work
 * on plain data, and parse.ts alone knows the YAML nodes. It becomes a UsageError there.
 */
export class PipelineProblem extends Error {
  constructor(
    message: string,
    readonly path: DocumentPath,
    /**
     * What to point at: the value at `path`, its key (an unknown key, a bad job name), or the key
     * that holds the map at `path` (a missing key: the map has no position of its own to show).
     */
    readonly target: 'value' | 'key' | 'owner' = 'value',
    /** For a problem inside a string value, such as one token of an expression: the offset in it. */
    readonly offset?: number,
  ) {
    super(message);
    this.name = 'PipelineProblem';
  }
}
