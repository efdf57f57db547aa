import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/', '.spool/', 'eslint.config.js', 'vitest.config.ts'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/ignore': ['node_modules'],
      // Sources import each other as './x.js' (NodeNext): without this alias the import rules
      // resolve nothing, and no-cycle and the zones below would pass whatever is imported.
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json', '.node'], extensionAlias: { '.js': ['.ts', '.js'] } })],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // A value import that closes a cycle is refused (type-only imports are not followed by
      // this rule; the zones below count them).
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // Arrows one way (DESIGN §7): the engine, the store and the shared code below never import
      // the operator, the server or the CLI that are built on them; the in-script client
      // (src/cli/script, bundled into every pass) imports only the protocol and src/common. Where
      // a zone is crossed, move the shared thing down into src/common or the protocol instead.
      'import-x/no-restricted-paths': ['error', {
        zones: [
          ...['engine', 'store', 'common', 'passes', 'activities'].map((lower) => ({
            target: `./src/${lower}`,
            from: ['./src/operator', './src/server', './src/cli'],
            message: `src/${lower} is below the operator, the server and the CLI`,
          })),
          {
            target: './src/common',
            from: './src',
            except: ['./common'],
            message: 'src/common imports nothing of Hyperspool but src/common',
          },
          {
            target: './src/api',
            from: './src',
            except: ['./api', './common', './engine/request-schema.ts'],
            message: "src/api (the API's shapes) imports only src/api, src/common and the name rule (src/engine/request-schema.ts)",
          },
          {
            // The web UI is bundled for a browser (scripts/build-ui.mjs): of the rest of src, only
            // the API's answers, which are plain schemas and the types derived from them, how a
            // gate's approval count reads (one plain function the CLI and chat messages share), and
            // which calls a rerun may start from (one list the engine shares).
            target: './src/ui',
            from: './src',
            except: ['./ui', './api/responses.ts', './api/from-schema.ts', './api/approval-count.ts', './api/rerun-from.ts'],
            message: "the web UI imports only src/ui and the API's answers (src/api/responses.ts)",
          },
          {
            // The pass pod's agent starts on every cold pass's path: none of the CLI (commander),
            // the server or the operator comes with it.
            target: './src/agent',
            from: ['./src/cli', './src/server', './src/operator'],
            message: "the pod's agent imports neither the CLI, the server nor the operator (its start is on every cold pass's path)",
          },
          {
            target: './src/cli/script',
            from: './src',
            except: ['./cli/script', './common', './engine/protocol.ts'],
            message: 'the in-script client imports only the protocol (src/engine/protocol.ts) and src/common',
          },
        ],
      }],
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowNullish: true }],
    },
  },
);
