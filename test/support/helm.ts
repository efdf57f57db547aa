import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '..', '..');

/** The chart (deploy/helm/hyperspool). */
export const CHART = join(repo, 'deploy', 'helm', 'hyperspool');

let binary: string | undefined;

/** Helm v4, built from the Go module proxy by hack/build-helm.sh (cached; .ci/run builds it first). */
export function helmBinary(): string {
  binary ??= execFileSync('bash', [join(repo, 'hack', 'build-helm.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return binary;
}
