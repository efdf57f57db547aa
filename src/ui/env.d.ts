/** esbuild bundles the stylesheet a module imports (scripts/build-ui.mjs). */
declare module '*.css';
