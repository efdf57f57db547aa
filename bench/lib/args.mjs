/** A bench's `--name VALUE` from the command line, or undefined. */
export const option = (name) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
};

/**
 * A bench's `--name N` as a number (`100_000` and `100,000` read as 100000), or `fallback`; one
 * that is negative, or not whole when `whole`, ends the bench saying so.
 */
export const number = (name, fallback, { whole = true } = {}) => {
  const value = option(name);
  if (value === undefined) return fallback;
  const n = Number(value.replaceAll('_', '').replaceAll(',', ''));
  if (!(whole ? Number.isInteger(n) : Number.isFinite(n)) || n < 0) throw new Error(`--${name} takes a ${whole ? 'whole ' : ''}number, not ${value}`);
  return n;
};
