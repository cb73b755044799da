// ESLint flat config: ESLint's recommended rules plus typescript-eslint's type-aware recommended
// set, which uses tsconfig.json's types to catch unhandled promises, `any` leaking out of
// untyped values and similar bugs that tsc itself accepts. Formatting is prettier's job
// (`npm run format:check`); none of these rules is about layout.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

// `import.meta.dirname` would need Node 20.11; package.json allows 18.19.
const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig(
  { ignores: ["node_modules/", "dist/", "build/", "coverage/"] },
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: here },
    },
    rules: {
      // One-line `if (x) return;` stays fine, but a body prettier wrapped onto the next line needs
      // braces, so that a second statement added under it cannot silently fall outside the `if`.
      curly: ["error", "multi-line"],
    },
  },
  {
    // Node scripts (build.mjs, this file) are outside tsconfig.json: no type information for them.
    files: ["**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
);
