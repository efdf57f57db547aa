/**
 * The header that says who a request acts as on `spool dev` (`spool --as NAME`): that server
 * trusts its local callers, so a person trying a gate that several people answer can be each of
 * them in turn (src/server/caller.ts). A server that authenticates people never reads it.
 */
export const ACT_AS_HEADER = 'x-spool-as';
