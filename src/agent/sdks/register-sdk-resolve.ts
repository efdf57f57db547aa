/**
 * Loaded with `node --import` into Node scripts (NODE_OPTIONS): registers sdk-resolve, so a script
 * can `import ... from '@hyperspool/sdk'` without installing it.
 */
import { register } from 'node:module';

register('./sdk-resolve.js', import.meta.url);
