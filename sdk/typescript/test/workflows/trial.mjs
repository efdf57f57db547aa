// A trial, tested through @hyperspool/sdk/testing (test/testing.test.ts): it charges a card (a step
// the cases stub: ./charge-card is not there), sleeps out two weeks, then waits a week for an upgrade.
import { outputSet, sleep, step, waitSignal } from '@hyperspool/sdk';

const DAY = 86_400_000;
const receipt = await step('charge', ['./charge-card', '--amount', '0']);
await sleep(14 * DAY);
const plan = await waitSignal('upgrade', { timeoutMs: 7 * DAY });
await outputSet('receipt', receipt.trim());
await outputSet('plan', plan ?? 'free');
