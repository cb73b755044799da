// Bundles src/index.ts into ../graphlab/widget/static/widget.js (one ES module, the anywidget
// `_esm`) and its stylesheet into widget.css beside it (the `_css`). The WebAssembly Graphviz is
// embedded in the bundle, so the notebook needs no system `dot` and no network.
import { build, context } from "esbuild";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = resolve(here, "../graphlab/widget/static");

/** @type {import("esbuild").BuildOptions} */
const options = {
  entryPoints: { widget: resolve(here, "src/index.ts") },
  outdir,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2022"],
  minify: !process.argv.includes("--dev"),
  sourcemap: false,
  legalComments: "none",
  logLevel: "info",
};

if (process.argv.includes("--watch")) {
  const ctx = await context({ ...options, minify: false });
  await ctx.watch();
} else {
  await build(options);
}
