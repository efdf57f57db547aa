/**
 * The .gitignore rules a checkout bundle respects (`spool run --with DIR`): enough of git's
 * syntax for the files people keep beside a script. A pattern without a slash matches a name at
 * any depth; one with a slash (or a leading one) is anchored to its .gitignore's directory; a
 * trailing slash matches directories only; `*`, `?` and `**` glob; `!` re-includes; `#` comments.
 */
export interface IgnoreRule {
  /** The directory of the .gitignore, relative to the bundle's root ('' for the root). */
  base: string;
  regex: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

function globToRegex(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i] ?? '';
    if (char === '*' && glob[i + 1] === '*') {
      // `**/` any leading directories, `/**` everything inside
      out += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (char === '*') out += '[^/]*';
    else if (char === '?') out += '[^/]';
    else if (char === '\\' && i + 1 < glob.length) out += (glob[++i] ?? '').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else out += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return out;
}

/** The rules of one .gitignore file's text, in order. */
export function parseGitignore(text: string, base: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, '');
    if (line === '' || line.startsWith('#')) continue;
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1);
    const dirOnly = line.endsWith('/');
    if (dirOnly) line = line.slice(0, -1);
    const anchored = line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    const body = globToRegex(line);
    rules.push({ base, regex: new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`), negate, dirOnly });
  }
  return rules;
}

/** Whether a path (relative to the root, '/'-separated) is ignored: the last rule that matches decides. */
export function ignored(rules: readonly IgnoreRule[], path: string, isDir: boolean): boolean {
  let result = false;
  for (const rule of rules) {
    if (rule.dirOnly && !isDir) continue;
    if (rule.base !== '' && !path.startsWith(`${rule.base}/`)) continue;
    const relative = rule.base === '' ? path : path.slice(rule.base.length + 1);
    if (rule.regex.test(relative)) result = !rule.negate;
  }
  return result;
}
