// ESLint flat config, the same rules as extension/eslint.config.mjs (recommended plus
// typescript-eslint's type-aware set) for the graph file viewer; formatting is prettier's job.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

// `import.meta.dirname` would need Node 20.11; package.json allows 18.19.
const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig(
  { ignores: ["node_modules/", "dist/", "lib/"] },
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
