/**
 * A value made the first time it is asked for, then kept. For what is dear to make and often not
 * needed: a JSON schema compiled by ajv costs milliseconds each, and a `spool run` that compiled
 * every schema it might check spent about a third of its CPU doing so.
 */
export function onFirstUse<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
