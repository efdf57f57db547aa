import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ignored, parseGitignore, type IgnoreRule } from './gitignore.js';

export interface BundleFile {
  /** Relative to the bundle's root, '/'-separated. */
  path: string;
  absolute: string;
  size: number;
  executable: boolean;
}

/** Never bundled: git's own directory and spool's local data. */
const ALWAYS_SKIPPED = new Set(['.git', '.spool']);

/**
 * The regular files under `root` a checkout bundle holds, in path order: what .gitignore files
 * (at the root and below) do not ignore. Symbolic links and other special files are left out: a
 * link may point outside the tree, and a later pass's pod has nothing it could point to.
 */
export function bundleFiles(root: string): BundleFile[] {
  const files: BundleFile[] = [];
  const walk = (dir: string, relative: string, inherited: readonly IgnoreRule[]): void => {
    let rules = inherited;
    try {
      rules = [...inherited, ...parseGitignore(readFileSync(join(dir, '.gitignore'), 'utf8'), relative)];
    } catch {
      // no .gitignore here
    }
    for (const name of readdirSync(dir).sort()) {
      if (ALWAYS_SKIPPED.has(name)) continue;
      const path = relative === '' ? name : `${relative}/${name}`;
      const absolute = join(dir, name);
      const stat = lstatSync(absolute);
      if (stat.isDirectory()) {
        if (!ignored(rules, path, true)) walk(absolute, path, rules);
      } else if (stat.isFile() && !ignored(rules, path, false)) {
        files.push({ path, absolute, size: stat.size, executable: (stat.mode & 0o111) !== 0 });
      }
    }
  };
  walk(root, '', []);
  return files;
}
