import { once } from 'node:events';
import { Router } from 'express';
import type { ArtifactRecord } from '../store/artifacts/types.js';
import type { Artifact, ResponseOf } from '../api/responses.js';
import type { ServerContext } from './context.js';
import { notFound } from './http-error.js';
import { loadRun } from './runs-routes.js';

/** What the API shows of an artifact (not where its parts are kept). */
export function artifactView(artifact: ArtifactRecord): Artifact {
  return {
    name: artifact.name,
    size: artifact.size,
    sha256: artifact.sha256,
    contentType: artifact.contentType,
    createdAt: artifact.createdAt.toISOString(),
  };
}

/**
 * A run's artifacts for people (docs/artifacts.md): the list, and each one's bytes, streamed a
 * part at a time. Reading them is reading the run (`get runs`), so a cluster's RBAC decides.
 */
export function artifactRoutes(ctx: ServerContext): Router {
  const router = Router();
  const { store } = ctx;

  router.get('/runs/:id/artifacts', async (req, res) => {
    const run = await loadRun(store, req.params.id);
    res.json({ artifacts: (await store.artifacts.list(run.id)).map(artifactView) } satisfies ResponseOf<'GET /runs/:id/artifacts'>);
  });

  router.get('/runs/:id/artifacts/:name', async (req, res) => {
    const run = await loadRun(store, req.params.id);
    const artifact = await store.artifacts.get(run.id, req.params.name);
    if (!artifact) throw notFound(`artifact '${req.params.name}' of run ${run.id}`);
    const file = artifact.name.split('/').pop() ?? 'artifact';
    res.status(200);
    res.setHeader('content-type', artifact.contentType);
    res.setHeader('content-length', String(artifact.size));
    res.setHeader('etag', `"${artifact.sha256}"`);
    res.setHeader('content-disposition', `attachment; filename="${file.replace(/["\\\r\n]/g, '_')}"`);
    for (let part = 0; part < artifact.parts; part++) {
      const bytes = await store.artifacts.blobs.readPart(artifact.blobKey, part);
      // Headers are out: a part gone missing can only cut the download short, which the length shows.
      if (!bytes) return void res.destroy(new Error(`artifact '${artifact.name}' lost part ${part}`));
      if (!res.write(bytes)) await once(res, 'drain');
    }
    res.end();
  });

  return router;
}
