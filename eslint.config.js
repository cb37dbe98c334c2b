// ESLint 9 flat config: JavaScript and TypeScript recommended rules (typescript-eslint, no type
// information, so that linting stays fast). Formatting is Prettier's job, not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// node_modules/ is ignored by ESLint's defaults; every dist/ (the server build, dashboard/dist) is build output.
export default tseslint.config({ ignores: ['data/**', 'coverage/**', '**/dist/**'] }, js.configs.recommended, ...tseslint.configs.recommended, {
  languageOptions: {
    ecmaVersion: 2023,
    sourceType: 'module',
    globals: {
      // Node.js globals used across src, test, bench, scripts and bin.
      process: 'readonly',
      Buffer: 'readonly',
      console: 'readonly',
      URL: 'readonly',
      URLSearchParams: 'readonly',
      setTimeout: 'readonly',
      clearTimeout: 'readonly',
      setInterval: 'readonly',
      clearInterval: 'readonly',
      setImmediate: 'readonly',
      fetch: 'readonly',
      performance: 'readonly',
      crypto: 'readonly',
      AbortController: 'readonly',
      AbortSignal: 'readonly',
      TextEncoder: 'readonly',
      TextDecoder: 'readonly',
      structuredClone: 'readonly',
      queueMicrotask: 'readonly',
      NodeJS: 'readonly',
      Response: 'readonly',
      Request: 'readonly',
      Headers: 'readonly',
    },
  },
  rules: {
    // `_name` marks a value destructured away on purpose (e.g. to drop a field from a wire record).
    '@typescript-eslint/no-unused-vars': [
      'error',
      { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
    ],
    // Tests read loosely typed JSON bodies; production code keeps `any` out by review and tsc strictness.
    '@typescript-eslint/no-explicit-any': 'off',
    // Fastify's declaration merging (`declare module 'fastify'`) needs interfaces that only extend.
    '@typescript-eslint/no-empty-object-type': 'off',
    // `while ((n = await sweep()) === limit);` loops and guarded `for (;;)` are intentional.
    'no-empty': ['error', { allowEmptyCatch: true }],
    'no-constant-condition': ['error', { checkLoops: false }],
    // Control characters in regular expressions are how input validation says "printable ASCII".
    'no-control-regex': 'off',
    eqeqeq: ['error', 'smart'],
    'prefer-const': 'error',
  },
});
