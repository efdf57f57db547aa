/**
 * A module resolve hook: `@hyperspool/sdk` resolves as usual first (a script's own node_modules
 * wins), and only when nothing provides it, to the SDK this package ships.
 */
interface ResolveContext {
  parentURL?: string;
  conditions?: string[];
}
interface Resolved {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context?: ResolveContext) => Promise<Resolved>;

const SDK = '@hyperspool/sdk';
// dist/agent/sdks/ -> dist/sdk/node_modules, where the build stages the SDK.
const BUNDLED = new URL('../../sdk/node_modules/@hyperspool/sdk/dist/index.js', import.meta.url).href;

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<Resolved> {
  try {
    return await next(specifier, context);
  } catch (error) {
    if (specifier !== SDK) throw error;
    return next(BUNDLED, context);
  }
}
