// Once for the whole e2e run, before any file: the node brought up (unless one is given or already
// up) and dist/ and the images built and imported. Each file used to do both itself, about a minute
// and a half per file; the files still install Hyperspool themselves (deployHyperspool), which is
// quick when nothing changed: the operator's pods are replaced once per build, not once per file.
import type { TestProject } from 'vitest/node';
import { bringUpCluster, buildImages, importImages, takeDownCluster } from './cluster.js';

const log = (line: string): void => void process.stderr.write(`e2e setup: ${line}\n`);

declare module 'vitest' {
  interface ProvidedContext {
    /** The kubeconfig of the cluster this run brought up or found, for openCluster. */
    e2eKubeconfig: string;
    /** Names this run's build of the images ('' when they were preloaded): deployHyperspool rolls the operator once per build. */
    e2eBuild: string;
    /** This run brought the node up (and takes it down): the benches install over no cluster but their own unless told. */
    e2eOwnCluster: boolean;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const rebuilt = process.env.HYPERSPOOL_E2E_IMAGES !== 'preloaded';
  const started = Date.now();
  const done = (what: string): void => log(`${what} after ${Math.round((Date.now() - started) / 1000)}s`);
  const upNode = async (): Promise<{ kubeconfig: string; ours: boolean }> => {
    const cluster = await bringUpCluster();
    done('the node is up');
    return cluster;
  };
  const build = async (): Promise<void> => {
    await buildImages();
    done('dist/ and the images built');
  };
  // The node's start is mostly waiting on its servers, the build mostly CPU: both at once.
  const [{ kubeconfig, ours }] = await Promise.all([upNode(), rebuilt ? build() : undefined]);
  if (rebuilt) await importImages();
  done('ready');
  project.provide('e2eKubeconfig', kubeconfig);
  project.provide('e2eOwnCluster', ours);
  project.provide('e2eBuild', rebuilt ? `${Date.now()}-${process.pid}` : '');
  return async () => {
    if (ours) await takeDownCluster();
  };
}
