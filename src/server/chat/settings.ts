import { readFileSync } from 'node:fs';

/**
 * The server's chat settings for approval gates (docs/ui.md#approvals-in-slack-and-mattermost):
 * how to reach each service, how to check its callbacks, and who the people are. `spool dev` and
 * `spool operator` read them from a JSON file (`--chat FILE` or $SPOOL_CHAT; on a cluster, a
 * Secret mounted as that file).
 */
export interface ChatSettings {
  slack?: {
    /** A bot token (xoxb-…) with chat:write. */
    botToken: string;
    /** The app's signing secret: each callback is signed with it. */
    signingSecret: string;
    /** Where Slack's Web API is; https://slack.com/api unless a test says otherwise. */
    apiUrl?: string;
  };
  mattermost?: {
    /** The Mattermost server, e.g. https://chat.example.com. */
    url: string;
    /** A bot's or a person's access token, for posting and updating. */
    botToken: string;
    /** A secret the buttons carry in their context and the callback must give back. */
    callbackToken: string;
  };
  /** Where the chat services reach this server, for Mattermost's button callbacks and links to run pages. */
  publicUrl?: string;
  /** Chat user ids (Slack `U…`, Mattermost ids) to the names of people who may answer gates. */
  people: Record<string, string>;
}

/** The settings in a JSON file, checked; an Error naming what is wrong otherwise. */
export function readChatSettings(file: string): ChatSettings {
  return checkChatSettings(JSON.parse(readFileSync(file, 'utf8')));
}

/** The window a Slack callback's timestamp must fall in, as Slack's documentation asks. */
export const SLACK_WINDOW_S = 5 * 60;

export function checkChatSettings(value: unknown): ChatSettings {
  const fail = (what: string): never => {
    throw new Error(`chat settings: ${what}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('must be a JSON object');
  const settings = value as Partial<ChatSettings>;
  if (typeof settings.people !== 'object' || settings.people === null) fail("'people' (chat user id → person) is required");
  for (const [id, person] of Object.entries(settings.people ?? {})) if (typeof person !== 'string' || !person) fail(`people.${id} must be a name`);
  if (settings.slack && (!settings.slack.botToken || !settings.slack.signingSecret)) fail("'slack' needs botToken and signingSecret");
  if (settings.mattermost && (!settings.mattermost.url || !settings.mattermost.botToken || !settings.mattermost.callbackToken)) {
    fail("'mattermost' needs url, botToken and callbackToken");
  }
  return settings as ChatSettings;
}
