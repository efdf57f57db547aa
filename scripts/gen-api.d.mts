// Types for scripts/gen-api.mjs, for the test that checks generated.ts is up to date.

/** Where the generated file goes, relative to the repository root. */
export const OUTPUT: string;

/** The text of src/operator/api/generated.ts for the CRDs in `root`/crds (default: this repository). */
export function generate(root?: string): Promise<string>;

/** The CRDs in `root`/crds, sorted by file name. */
export function readCrds(root?: string): {
  file: string;
  group: string;
  version: string;
  scope: string;
  names: { kind: string; plural: string; singular?: string; listKind?: string; shortNames?: string[]; categories?: string[] };
  schema: Record<string, unknown>;
}[];
