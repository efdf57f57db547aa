import type { RunResource } from '../api/responses.js';
import type { Store } from '../store/store.js';
import type { ChatSettings } from './chat/settings.js';
import type { AgentIdentity, RemotePasses } from './remote-passes.js';

// Access and ActivityAgents are declared here, not beside the code that uses them (access.ts,
// activity-report-routes.ts), because those modules take a ServerContext: the arrows go one way.

/** What a request to the API does, in the terms of Kubernetes RBAC on hyperspool.dev resources. */
export interface Access {
  verb: 'get' | 'list' | 'create' | 'update' | 'delete';
  resource: 'runs' | 'handlers' | 'schedules' | 'events' | 'state' | 'workflows';
  /** The project (namespace on a cluster) the request touches. */
  project: string;
  name?: string;
}

/** Who an activity attempt's pod is: the one attempt of one activity its token was issued for. */
export interface ActivityAgentIdentity {
  runId: string;
  name: string;
  attempt: number;
}

/** What the API needs to hear activity attempts' pods (the operator's; absent elsewhere). */
export interface ActivityAgents {
  authenticate(token: string): Promise<ActivityAgentIdentity | null>;
  /** An attempt's result was recorded: whoever waits on its Job may stop. */
  reported(identity: ActivityAgentIdentity): void;
}

/** What the API needs from whoever serves it (the dev server here, the operator on a cluster). */
export interface ServerContext {
  store: Store;
  env: string;
  defaultProject: string;
  now(): Date;
  /** New work is in the store: look for it now. */
  poke(): void;
  /** End the script of a pass under way for this run. */
  abortPass(runId: string): void;
  /**
   * Refuses (throws an HttpError 401 or 403) a caller who may not do this, else answers their user
   * name, or their name and groups; absent on the dev server, which trusts whoever reaches its loopback port.
   */
  authorize?: (authorization: string, access: Access) => Promise<string | { user: string; groups: string[] } | undefined | void>;
  /**
   * Serve only what a loopback client asks for (the dev server, which runs whatever it is sent):
   * a Host that is not a loopback name (DNS rebinding) and a cross-origin browser request that
   * changes anything are refused.
   */
  loopbackOnly?: boolean;
  /**
   * On a cluster, Handlers and Schedules are resources the operator reconciles into the store: the
   * API refuses to set, delete, suspend or resume them there, saying what to do with kubectl instead.
   */
  triggersAreResources?: boolean;
  /** Approval gates in Slack and Mattermost (src/server/chat); absent where none is set up. */
  chat?: ChatSettings;
  /**
   * The Run resources of these runs, by run id, where runs have them (the operator, which people
   * name runs by their Run); absent on the dev server.
   */
  runResources?(runIds: string[]): Promise<Map<string, RunResource>>;
  /** Remote agents (the operator's pods); absent where passes run in-process. */
  agents?: {
    /** Activity attempts' pods, which report their command's result (absent: no activities here). */
    activities?: ActivityAgents;
    passes: RemotePasses;
    /** The pass a bearer token was issued for, or null when the token is not valid. */
    authenticate(token: string): Promise<AgentIdentity | null>;
    /**
     * A warm pod's agent asking for its pass (spec.warmPods): null when the token is no warm pod's;
     * else the pass once the pod is assigned one, or a null assignment after a while (ask again).
     */
    warmPods?: { wait(token: string, signal: AbortSignal): Promise<{ assignment: AgentIdentity | null } | null> };
  };
}
