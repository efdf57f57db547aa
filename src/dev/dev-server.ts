import type { Server } from 'node:http';
import { endAllScripts } from '../agent/script-process.js';
import { createApp } from '../server/app.js';
import { listen } from '../server/listen.js';
import { startGateNotifier } from '../server/chat/gates.js';
import type { ChatSettings } from '../server/chat/settings.js';
import type { ServerContext } from '../server/context.js';
import { openStore, type StoreOptions } from '../store/open.js';
import type { Store } from '../store/store.js';
import { Executor } from '../passes/executor.js';
import { flushTracing, setTracingService } from '../tracing/tracing.js';
import { checkProject } from '../engine/request-schema.js';
import { captureLog, logsDirFor, removeEmptyRunDirs } from '../passes/log-capture.js';
import { checkStartSettings } from './start-settings.js';

export const DEFAULT_PORT = 7456;

export interface DevServerOptions extends StoreOptions {
  port?: number;
  host?: string;
  project?: string;
  pollMs?: number;
  /** Approval gates in Slack and Mattermost (src/server/chat/settings.ts). */
  chat?: ChatSettings;
  /** Each pass in a new, empty working directory, as on a cluster. */
  freshDir?: boolean;
}

export interface DevServer {
  url: string;
  store: Store;
  close(): Promise<void>;
}

/**
 * `spool dev`: the HTTP API and a local executor over one store. Everything lives in the store, so
 * a server killed and started again carries on: passes that were running are dispatched again.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  checkProject(options.project ?? 'default');
  checkStartSettings();
  setTracingService('spool-dev');
  const store = await openStore(options);
  const now = new Date();
  await store.recoverInterruptedRuns(now);
  await store.requeueRunningActivities();
  const logsDir = logsDirFor(options);
  removeEmptyRunDirs(logsDir);
  const executor = new Executor(store, {
    output: (run) => captureLog(store, logsDir, run),
    schedules: true,
    freshDir: options.freshDir ?? false,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
  });
  const context: ServerContext = {
    store,
    env: 'dev',
    defaultProject: options.project ?? 'default',
    now: () => new Date(),
    poke: () => executor.poke(),
    abortPass: (runId) => executor.abortPass(runId),
    loopbackOnly: true,
    ...(options.chat ? { chat: options.chat } : {}),
  };
  const host = options.host ?? '127.0.0.1';
  let server: Server;
  try {
    server = await listen(createApp(context), options.port ?? DEFAULT_PORT, host, '--port');
  } catch (error) {
    await store.close();
    throw error;
  }
  const notifier = options.chat ? startGateNotifier({ ...context, chat: options.chat }) : null;
  executor.start();
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? DEFAULT_PORT);
  return {
    url: `http://${host}:${port}`,
    store,
    async close() {
      server.close();
      server.closeAllConnections();
      // Stopping the server (Ctrl-C, SIGTERM) stops it, not its runs: passes under way are left
      // unsettled, their scripts ended, and a server started on this store again replays them, as
      // after a crash. Settling them would fail each run mid-step ("script killed by SIGTERM").
      await executor.abandon();
      endAllScripts(); // a script abandon() did not wait out (it waits 5 s at most)
      await notifier?.stop();
      await flushTracing();
      await store.close();
    },
  };
}
