import { UsageError } from '../common/errors.js';
import type { ChatSettings } from '../server/chat/settings.js';

/** `--chat FILE` (or $SPOOL_CHAT) of `spool dev` and `spool operator`: none when neither is given. */
export async function chatOption(file: string | undefined): Promise<ChatSettings | undefined> {
  if (!file) return undefined;
  const { readChatSettings } = await import('../server/chat/settings.js');
  try {
    return readChatSettings(file);
  } catch (error) {
    throw new UsageError(`--chat ${file}: ${(error as Error).message}`);
  }
}
