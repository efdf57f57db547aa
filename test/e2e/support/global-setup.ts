// Once for the whole e2e run, before any file: the node brought up (unless one is given or already
// up) and dist/ and the images built and imported. Each file used to do both itself, about a minute
// and a half per file; the files still install Hyperspool themselves (deployHyperspool), which is
// quick when nothing changed: the operator's pods are replaced once per build, not once per file.
import type { TestProject } from 'vitest/node';
import { bringUpCluster, buildImages, takeDownCluster } from './cluster.js';

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
  const { kubeconfig, ours } = await bringUpCluster();
  project.provide('e2eKubeconfig', kubeconfig);
  project.provide('e2eOwnCluster', ours);
  const rebuilt = process.env.HYPERSPOOL_E2E_IMAGES !== 'preloaded';
  if (rebuilt) await buildImages();
  project.provide('e2eBuild', rebuilt ? `${Date.now()}-${process.pid}` : '');
  return async () => {
    if (ours) await takeDownCluster();
  };
}
