import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/requests.js';
import { aggregatedRequest } from '../../src/cli/cluster/aggregated-path.js';
import { apiRequestOf, attributesOf, NOT_PEOPLE, PREFIX } from '../../src/operator/aggregated/request-path.js';
import { propertyRuns } from '../support/property.js';

/**
 * Every route of the /v1 API that people call (src/api/requests.ts) has its aggregated
 * counterpart, with no wiring of its own (issue 34): a request the CLI or `spool ui`'s pages make
 * becomes an api.hyperspool.dev path (src/cli/cluster/aggregated-path.ts), which kube-apiserver and
 * the operator read as RBAC attributes the Kubernetes way (a read is get or list, POST create, PUT
 * update, DELETE delete; the run by its Run's name, in its namespace), and which the operator hands
 * on (src/operator/aggregated/request-path.ts) as the very /v1 request it came from: the same path,
 * the same query, the same body, scoped to that namespace. The real thing through kube-apiserver:
 * test/operator/aggregated.test.ts.
 */
const PEOPLES_ROUTES = API_ROUTES.filter((route) => !NOT_PEOPLE.has(route.path.split('/')[1] ?? ''));

const dnsLabel = fc.stringMatching(/^[a-z][a-z0-9-]{0,14}[a-z0-9]$/);
/** A name not of a run: a workflow's on a cluster is NAME/FILE, a state key any text. */
const name = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/),
  fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), fc.stringMatching(/^[a-z0-9._-]{1,10}$/)).map(([workflow, file]) => `${workflow}/${file}`),
  fc.string({ minLength: 1, maxLength: 12 }).filter((text) => text !== '.' && text !== '..'),
);
/** Artifact names hold slashes, and any character. */
const artifact = fc.array(fc.string({ minLength: 1, maxLength: 8 }).filter((part) => !part.includes('/')), { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));
const runKey = fc.stringMatching(/^run-[a-z0-9]{16}$/);
/** Query values the pages send (q, since, until, sort, counts...), with anything a person types in a search. */
const query = fc.dictionary(fc.constantFrom('q', 'since', 'until', 'sort', 'counts', 'status', 'workflow', 'subject', 'parent', 'before', 'limit', 'after', 'all'), fc.string({ maxLength: 12 }), { maxKeys: 5 });
const body = fc.dictionary(fc.constantFrom('name', 'payload', 'values', 'input', 'fromStep', 'type', 'subject', 'id', 'value'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });

/**
 * The path as the operator receives it from kube-apiserver, which decodes it (a `%2F` becomes a
 * separator) and sends it on escaped as Go's URL.EscapedPath escapes a path.
 */
function throughKubeApiserver(path: string): string {
  const decoded = decodeURIComponent(path);
  return Array.from(new TextEncoder().encode(decoded), (byte) => {
    const char = String.fromCharCode(byte);
    return /[A-Za-z0-9\-_.~$&+,/:;=@]/.test(char) && byte < 0x80 ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

const KUBE_VERBS: Record<string, [named: string, collection: string]> = { GET: ['get', 'list'], POST: ['create', 'create'], PUT: ['update', 'update'], DELETE: ['delete', 'deletecollection'] };

describe("the aggregated API's counterpart of each /v1 route", () => {
  it('is found, authorized the Kubernetes way, and handed on as the same request in the namespace of the path', async () => {
    const cases = fc.record({
      route: fc.constantFrom(...PEOPLES_ROUTES),
      namespace: dnsLabel,
      cliNamespace: dnsLabel,
      key: runKey,
      runName: dnsLabel,
      name,
      artifact,
      query,
      body,
      decision: fc.constantFrom('approve', 'reject'),
      projectInBody: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const runId = `k8s:${c.namespace}:${c.key}`;
        const v1Path = c.route.path
          .replace(':id', encodeURIComponent(runId))
          .replace(/:name$/, encodeURIComponent(c.route.path.startsWith('/runs/') ? c.artifact : c.name))
          .replace(/:(name|job|entity|key)/g, () => encodeURIComponent(c.name));
        const search = new URLSearchParams(c.query);
        const onRun = v1Path.startsWith('/runs/');
        // Routes not of a run say their project, as the CLI and the pages do, in the body or the query.
        const hasBody = c.route.method === 'POST' || c.route.method === 'PUT';
        if (!onRun && !(c.projectInBody && hasBody)) search.set('project', c.namespace);
        const approval = c.route.path === '/runs/:id/approvals/:job' && c.route.method === 'POST';
        const sent = !hasBody ? undefined : approval ? { ...c.body, decision: c.decision } : { ...c.body, ...(!onRun && c.projectInBody ? { project: c.namespace } : {}) };

        const aggregated = await aggregatedRequest(c.route.method, `${v1Path}${search.size > 0 ? `?${search.toString()}` : ''}`, sent, c.cliNamespace, (id) => Promise.resolve(id === runId ? c.runName : 'unknown'));
        expect(aggregated).not.toBeNull();
        const [path = '', aggregatedSearch = ''] = (aggregated?.path ?? '').split('?');
        expect(path.startsWith(`${PREFIX}/namespaces/${c.namespace}/`)).toBe(true);

        const attributes = attributesOf(aggregated?.method ?? '', throughKubeApiserver(path).slice(PREFIX.length));
        expect(attributes).not.toBeNull();
        if (!attributes) return;
        expect(attributes.namespace).toBe(c.namespace);
        expect(attributes.verb).toBe(KUBE_VERBS[c.route.method]?.[attributes.name === undefined ? 1 : 0]);
        if (onRun) expect(attributes).toMatchObject({ resource: 'runs', name: c.runName });

        const handedBody = typeof aggregated?.body === 'object' && aggregated.body !== null ? (aggregated.body as Record<string, unknown>) : {};
        // The operator scopes what is not a run's to the namespace it authorized.
        const handed = apiRequestOf(attributes, onRun ? runId : undefined, onRun ? handedBody : { ...handedBody, project: c.namespace });
        expect(handed?.path).toBe(`/v1${v1Path}`);
        const handedQuery = new URLSearchParams(aggregatedSearch);
        search.delete('project');
        expect(Object.fromEntries(handedQuery)).toEqual(Object.fromEntries(search));
        if (sent !== undefined) expect(handed?.body).toEqual(onRun ? sent : { ...sent, project: c.namespace });
      }),
      propertyRuns('aggregated counterparts', 400),
    );
  });

  it('does not serve the pods’ routes nor checkouts, and names the pages as the ui files', () => {
    expect(attributesOf('POST', '/namespaces/team-a/agent/runs/x/passes/1/calls')).toBeNull();
    expect(attributesOf('POST', '/namespaces/team-a/checkouts')).toBeNull();
    expect(attributesOf('GET', '/ui/index.html')).toEqual({ verb: 'get', resource: 'ui', name: 'index.html', rest: [] });
    expect(attributesOf('POST', '/ui/index.html')).toBeNull();
  });
});
