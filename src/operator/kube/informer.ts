import { Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { ensureError } from '../../common/errors.js';
import { Backoff, sleep, type BackoffPolicy } from './backoff.js';
import { keyOf, objectKey } from './object-key.js';

/**
 * A list-then-watch cache of one resource, with handlers, that keeps itself right through watch
 * timeouts, API server restarts, `410 Gone` and plain bad luck.
 *
 * Written on client-node's `Watch` (the HTTP stream: auth, TLS, line framing) plus a list function,
 * not on its `ListWatch`/`makeInformer`, because that one:
 * - stops for good on any list or watch error other than 410 and its own inactivity timeout (it
 *   emits 'error' and waits for someone to call start() again), so an API server restart quietly
 *   ends it unless every user writes the same restart-with-backoff wrapper;
 * - treats a watch ERROR event other than 410 (an etcd hiccup, a 500) as a clean close;
 * - has no periodic resync, and its relist reports only objects whose resourceVersion changed;
 * - hides its state, so a wrapper restarting it cannot choose a relist over a re-watch.
 * Owning the loop also lets the informer relist after every watch error (not just 410): the relist
 * is diffed against the cache, so objects deleted while the watch was down are reported as
 * deleted even if the watch could never have told us.
 */

/**
 * Selectors the informer applies to its watch, which the list function must apply too, and the
 * page it asks for: the list is read `limit` objects at a time, each page from `_continue` on (the
 * names client-node's list functions take), so no response holds every object at once.
 */
export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  _continue?: string;
}

export interface DeleteInfo {
  /**
   * True when the object vanished between two lists rather than in a watch event: the object
   * handed over is the last state the cache saw, not the state it was deleted in.
   */
  finalStateUnknown: boolean;
}

export interface InformerOptions<T extends KubernetesObject> {
  kubeConfig: KubeConfig;
  /**
   * The collection's URL path, which is also the watch path: `/api/v1/namespaces/ns/configmaps`,
   * `/apis/hyperspool.dev/v1alpha1/runs` (all namespaces), `/apis/batch/v1/namespaces/ns/jobs`.
   */
  path: string;
  /**
   * Lists the same collection, e.g. `(q) => core.listNamespacedConfigMap({ namespace, ...q })` or
   * `(q) => custom.listClusterCustomObject({ group, version, plural, ...q })`, passing the whole
   * query on (its page too). The last page's `metadata.resourceVersion` is where the watch starts.
   */
  list: (query: ListQuery) => Promise<KubernetesListObject<T>>;
  /**
   * How many objects one list request asks for (500 unless set, as client-go's reflector): with
   * 100,000 Runs, one response of every Run was 150 MB of text and its parsed objects at once,
   * the leader's peak (docs/scaling.md).
   */
  pageSize?: number;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Turns a watch event's object (plain JSON: timestamps are strings) into `T`. The generated
   * typed list functions return class instances with Date fields; pass a decoder when you need the
   * two to match. Custom resources are plain JSON both ways and need none.
   */
  decode?: (raw: unknown) => T;
  /**
   * Which objects the cache keeps. One it refuses (a finished Job, say) is still handed to the
   * handlers, then forgotten, so the cache holds only what the operator still acts on and does not
   * grow with what is over. Its later deletion is then not reported. All are kept unless set.
   */
  retain?: (object: T) => boolean;
  /**
   * The lean form the cache keeps of an object the operator needs only part of (a finished Run:
   * what retention and the lookups by run read), or undefined to keep it whole. Handlers still get
   * the whole object; the cache, and so get() and list(), the lean one.
   */
  slim?: (object: T) => T | undefined;
  /**
   * A second key to find cached objects by (a Run's run id), for getByIndex: one lookup, not a walk
   * of the whole cache. Asked of the form the cache keeps (see slim). The last object cached under
   * a key wins.
   */
  index?: (object: T) => string | undefined;
  onAdd?: (object: T) => void;
  /** Also called for every object at each resync, with an unchanged resourceVersion if nothing changed. */
  onUpdate?: (object: T, old: T) => void;
  onDelete?: (object: T, info: DeleteInfo) => void;
  /**
   * Told of each list that landed, with why it was needed: the first (`start`), a resync, the
   * watch's resourceVersion compacted away (`expired`, a 410), or a watch that failed (`error`).
   * What the informer heals, for hyperspool_informer_relists_total.
   */
  onRelist?: (reason: RelistReason) => void;
  /** Told of list and watch failures (the informer retries by itself) and of handlers that threw. */
  onError?: (error: Error) => void;
  /**
   * How often to relist everything and call onUpdate for every object, so a reconciler that
   * dropped an event (or whose world changed outside Kubernetes) converges anyway. 5 minutes
   * unless set; 0 turns it off.
   */
  resyncPeriodMs?: number;
  /**
   * How long the server keeps one watch open. Unless set, a random 20 to 28 s per watch: client-node's
   * `Watch` aborts a stream that is silent for 30 s, and a watch that ends on the server's timeout
   * first gets a BOOKMARK with the current resourceVersion, so a quiet resource resumes from a fresh
   * version instead of one so old it answers 410 and forces a relist.
   */
  watchTimeoutSeconds?: number;
  /** Delays between failed lists/watches: 500 ms doubling to 30 s, jittered, unless set. */
  backoff?: BackoffPolicy;
}

export type RelistReason = 'start' | 'resync' | 'expired' | 'error';

export interface Informer<T extends KubernetesObject> {
  get(namespace: string | undefined, name: string): T | undefined;
  /** By `namespace/name` (see objectKey), as a work queue hands keys back. */
  getByKey(key: string): T | undefined;
  /** The cached object with that index key (see InformerOptions.index). */
  getByIndex(key: string): T | undefined;
  /** Every cached object, or those of one namespace. Treat them as read-only: they are the cache. */
  list(namespace?: string): T[];
  /** Every cached object, as list() but not copied into an array: for a walk of them all each second (the Run sweep). Not across an await. */
  values(): IterableIterator<T>;
  /** How many cached objects are kept whole and how many in their lean form (see InformerOptions.slim). */
  counts(): { whole: number; slim: number };
  /** True once the first list has been applied. */
  hasSynced(): boolean;
  /** Resolves true at the first sync, or false if the informer is stopped before it. */
  waitForSync(): Promise<boolean>;
  /** The resourceVersion the cache reflects (from the last list, event or bookmark). */
  readonly resourceVersion: string;
  /** Ends the watch; no handler is called after this resolves. */
  stop(): Promise<void>;
}

const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };
const DEFAULT_RESYNC_MS = 5 * 60_000;
const DEFAULT_PAGE_SIZE = 500;
/** A watch that lived this long (or delivered anything) was healthy: the next failure starts a fresh backoff. */
const HEALTHY_WATCH_MS = 5_000;

type WatchOutcome =
  | { kind: 'stopped' }
  | { kind: 'resync' }
  | { kind: 'closed'; healthy: boolean }
  | { kind: 'gone'; healthy: boolean }
  | { kind: 'error'; healthy: boolean; error: Error };

interface WatchStatus {
  code?: number;
  reason?: string;
  message?: string;
}

/** Where the next page starts: `_continue` in client-node's typed lists, `continue` in the plain JSON of a custom resource's. */
function continueOf(page: KubernetesListObject<KubernetesObject>): string | undefined {
  const plain = page.metadata as { continue?: string } | undefined;
  return page.metadata?._continue || plain?.continue || undefined;
}

export function startInformer<T extends KubernetesObject>(options: InformerOptions<T>): Informer<T> {
  const watch = new Watch(options.kubeConfig);
  const stopController = new AbortController();
  const stopSignal = stopController.signal;
  const backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
  const resyncPeriodMs = options.resyncPeriodMs ?? DEFAULT_RESYNC_MS;
  const query: ListQuery = {};
  if (options.labelSelector !== undefined) query.labelSelector = options.labelSelector;
  if (options.fieldSelector !== undefined) query.fieldSelector = options.fieldSelector;

  const cache = new Map<string, T>();
  /** Keys of the objects cached in their lean form. */
  const slimmed = new Set<string>();
  /** Index key → object key. */
  const indexed = new Map<string, string>();
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const retained = options.retain ?? (() => true);
  let resourceVersion = '';
  let synced = false;
  let resolveSynced: (value: boolean) => void = () => undefined;
  const syncedPromise = new Promise<boolean>((resolve) => {
    resolveSynced = resolve;
  });

  function report(error: unknown): void {
    if (stopSignal.aborted) return;
    try {
      options.onError?.(ensureError(error));
    } catch {
      // A reporter that throws must not take the informer down with it.
    }
  }

  // Handlers run inline, in event order; one that throws is reported and the stream goes on.
  function emit(call: () => void): void {
    if (stopSignal.aborted) return;
    try {
      call();
    } catch (error) {
      report(error);
    }
  }

  /** The form of an object the cache keeps: its lean one if it has one, and never its managedFields (which nothing here reads, and which are a good part of an object's size). */
  function cacheForm(key: string, object: T): T {
    const lean = options.slim?.(object);
    if (lean) {
      slimmed.add(key);
      return lean;
    }
    slimmed.delete(key);
    if (!object.metadata?.managedFields) return object;
    const metadata = { ...object.metadata };
    delete metadata.managedFields;
    return { ...object, metadata };
  }

  function store(key: string, object: T): void {
    const previous = cache.get(key);
    // Unchanged (a relist): its cached form stays, rather than a copy of it made beside it.
    const version = object.metadata?.resourceVersion;
    if (previous && version !== undefined && previous.metadata?.resourceVersion === version) return;
    const previousIndex = previous && options.index?.(previous);
    if (previousIndex !== undefined && indexed.get(previousIndex) === key) indexed.delete(previousIndex);
    const cached = cacheForm(key, object);
    cache.set(key, cached);
    const index = options.index?.(cached);
    if (index !== undefined) indexed.set(index, key);
  }

  function forget(key: string): void {
    const previous = cache.get(key);
    const previousIndex = previous && options.index?.(previous);
    if (previousIndex !== undefined && indexed.get(previousIndex) === key) indexed.delete(previousIndex);
    cache.delete(key);
    slimmed.delete(key);
  }

  /**
   * One page of a list, applied to the cache in place and reported: a relist keeps one cache, not
   * a second copy of every object beside the first (docs/scaling.md). `listed` collects the keys
   * seen, for applyListEnd.
   */
  function applyPage(items: readonly T[], resync: boolean, listed: Set<string>): void {
    for (const item of items) {
      const key = objectKey(item);
      listed.add(key);
      const old = cache.get(key);
      if (retained(item)) store(key, item);
      else forget(key);
      if (!old) emit(() => options.onAdd?.(item));
      else if (resync || old.metadata?.resourceVersion !== item.metadata?.resourceVersion) emit(() => options.onUpdate?.(item, old));
    }
  }

  /** The list is whole: what it did not hold was deleted while the watch could not say. */
  function applyListEnd(listed: Set<string>): void {
    for (const [key, old] of cache) {
      if (listed.has(key)) continue;
      forget(key);
      emit(() => options.onDelete?.(old, { finalStateUnknown: true }));
    }
  }

  function applyEvent(type: string, raw: unknown): void {
    if (type === 'BOOKMARK') {
      const version = (raw as KubernetesObject | undefined)?.metadata?.resourceVersion;
      if (version) resourceVersion = version;
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
    const object = options.decode ? options.decode(raw) : (raw as T);
    const key = objectKey(object);
    const old = cache.get(key);
    if (type === 'DELETED') {
      if (old) {
        forget(key);
        emit(() => options.onDelete?.(object, { finalStateUnknown: false }));
      }
    } else {
      if (retained(object)) store(key, object);
      else forget(key);
      if (old) emit(() => options.onUpdate?.(object, old));
      else emit(() => options.onAdd?.(object));
    }
    const version = object.metadata?.resourceVersion;
    if (version) resourceVersion = version;
  }

  function watchOnce(fromVersion: string, resyncAt: number): Promise<WatchOutcome> {
    return new Promise<WatchOutcome>((resolve) => {
      const startedAt = Date.now();
      const timeoutSeconds = options.watchTimeoutSeconds ?? 20 + Math.floor(Math.random() * 9);
      let settled = false;
      let events = 0;
      let status: WatchStatus | undefined;
      let controller: AbortController | undefined;
      let resyncTimer: NodeJS.Timeout | undefined;

      const healthy = (): boolean =>
        events > 0 || Date.now() - startedAt >= Math.min(HEALTHY_WATCH_MS, timeoutSeconds * 800);
      const finish = (outcome: WatchOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(resyncTimer);
        stopSignal.removeEventListener('abort', onStop);
        controller?.abort();
        resolve(outcome);
      };
      const onStop = (): void => finish({ kind: 'stopped' });
      stopSignal.addEventListener('abort', onStop, { once: true });
      if (resyncPeriodMs > 0) {
        resyncTimer = setTimeout(() => finish({ kind: 'resync' }), Math.max(0, resyncAt - Date.now()));
      }

      const onEvent = (type: string, object: unknown): void => {
        if (settled) return;
        if (type === 'ERROR') {
          // A Status; the server ends the stream right after it, and onDone decides what it meant.
          status = typeof object === 'object' && object !== null ? object : {};
          return;
        }
        events += 1;
        applyEvent(type, object);
      };
      const onDone = (error: unknown): void => {
        if (settled) return;
        const httpStatus = (error as { statusCode?: unknown } | null)?.statusCode;
        if (status?.code === 410 || httpStatus === 410) {
          finish({ kind: 'gone', healthy: healthy() });
        } else if (status) {
          const text = `${status.code ?? '?'} ${status.reason ?? ''}: ${status.message ?? ''}`;
          finish({ kind: 'error', healthy: healthy(), error: new Error(`watch ${options.path} failed: ${text}`) });
        } else if (error === null || error === undefined) {
          finish({ kind: 'closed', healthy: healthy() });
        } else if ((error as { name?: unknown }).name === 'TimeoutError') {
          // client-node's 30 s inactivity timer: a quiet watch, not a broken one.
          finish({ kind: 'closed', healthy: true });
        } else {
          const cause = ensureError(error);
          const message = `watch ${options.path} failed${typeof httpStatus === 'number' ? ` (HTTP ${httpStatus})` : ''}: ${cause.message}`;
          finish({ kind: 'error', healthy: healthy(), error: new Error(message, { cause }) });
        }
      };

      const params: Record<string, string | number | boolean | undefined> = {
        resourceVersion: fromVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        ...query,
      };
      // `watch` resolves with the stream's controller once the response has begun (or failed); until
      // then there is nothing to abort, so a finish() in between aborts it on arrival.
      watch.watch(options.path, params, onEvent, onDone).then(
        (arrived) => {
          controller = arrived;
          if (settled) arrived.abort();
        },
        (error: unknown) => onDone(error ?? new Error('watch failed')),
      );
    });
  }

  /** One page of the list, or undefined if the informer was stopped meanwhile. */
  async function listPage(from: string | undefined): Promise<KubernetesListObject<T> | undefined> {
    const listing = options.list({ ...query, limit: pageSize, ...(from ? { _continue: from } : {}) });
    // If stop() wins the race the list still settles later; its failure then is nobody's business.
    listing.catch(() => undefined);
    let onStop: (() => void) | undefined;
    const stopped = new Promise<undefined>((resolve) => {
      onStop = () => resolve(undefined);
      stopSignal.addEventListener('abort', onStop, { once: true });
    });
    try {
      return await Promise.race([listing, stopped]);
    } finally {
      if (onStop) stopSignal.removeEventListener('abort', onStop);
    }
  }

  /**
   * Lists every object, page by page, each applied as it arrives; the resourceVersion the list was
   * read at, or undefined if stopped. A page that fails (its continue token expired, the server
   * away) fails the whole list, which starts again from the first page: what the pages before it
   * put in the cache was true, only newer.
   */
  async function listAll(resync: boolean): Promise<string | undefined> {
    const listed = new Set<string>();
    let from: string | undefined;
    for (;;) {
      const page = await listPage(from);
      if (!page || stopSignal.aborted) return undefined;
      applyPage(page.items ?? [], resync, listed);
      from = continueOf(page);
      if (!from) {
        applyListEnd(listed);
        return page.metadata?.resourceVersion ?? '';
      }
    }
  }

  async function run(): Promise<void> {
    let needList = true;
    let listReason: RelistReason = 'start';
    let resync = false;
    let resyncAt = Number.POSITIVE_INFINITY;
    while (!stopSignal.aborted) {
      if (needList) {
        let listedAt: string | undefined;
        try {
          listedAt = await listAll(resync);
        } catch (error) {
          report(new Error(`list ${options.path} failed: ${ensureError(error).message}`, { cause: error }));
          await sleep(backoff.next(), stopSignal);
          continue;
        }
        if (listedAt === undefined || stopSignal.aborted) return;
        resourceVersion = listedAt;
        const reason = listReason;
        emit(() => options.onRelist?.(reason));
        needList = false;
        resync = false;
        resyncAt = Date.now() + resyncPeriodMs;
        if (!synced) {
          synced = true;
          resolveSynced(true);
        }
      }

      const outcome = await watchOnce(resourceVersion, resyncAt);
      switch (outcome.kind) {
        case 'stopped':
          return;
        case 'resync':
          needList = true;
          listReason = 'resync';
          resync = true;
          break;
        case 'closed':
          // The server's timeout or a quiet stream: resume from where we are, at once if it lived.
          if (outcome.healthy) backoff.reset();
          else await sleep(backoff.next(), stopSignal);
          break;
        case 'gone':
          // Our resourceVersion was compacted away: only a fresh list can tell what changed.
          needList = true;
          listReason = 'expired';
          if (outcome.healthy) backoff.reset();
          else await sleep(backoff.next(), stopSignal);
          break;
        case 'error':
          report(outcome.error);
          if (outcome.healthy) backoff.reset();
          needList = true;
          listReason = 'error';
          await sleep(backoff.next(), stopSignal);
          break;
      }
    }
  }

  const running = run()
    .catch(report)
    .finally(() => resolveSynced(false));

  return {
    get: (namespace, name) => cache.get(keyOf(namespace, name)),
    getByKey: (key) => cache.get(key),
    getByIndex: (key) => {
      const objectKeyOf = indexed.get(key);
      return objectKeyOf === undefined ? undefined : cache.get(objectKeyOf);
    },
    list: (namespace) => {
      const all = [...cache.values()];
      return namespace === undefined ? all : all.filter((object) => object.metadata?.namespace === namespace);
    },
    values: () => cache.values(),
    counts: () => ({ whole: cache.size - slimmed.size, slim: slimmed.size }),
    hasSynced: () => synced,
    waitForSync: () => syncedPromise,
    get resourceVersion() {
      return resourceVersion;
    },
    stop: async () => {
      stopController.abort();
      await running;
    },
  };
}
