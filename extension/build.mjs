// Bundles src/index.ts into ../graphlab/widget/static/widget.js (one ES module, the anywidget
// `_esm`) and its stylesheet into widget.css beside it (the `_css`). The WebAssembly Graphviz is
// embedded in the bundle, so the notebook needs no system `dot` and no network.
import { build, context } from "esbuild";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";
import { readFile } from "node:fs/promises";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = resolve(here, "../graphlab/widget/static");

// ELK runs in a web worker; anywidget loads one file, so the worker's script travels inside the
// bundle as text (`import source from "elk-worker-source"`) and starts from a Blob URL.
const elkWorkerSource = {
  name: "elk-worker-source",
  setup(b) {
    b.onResolve({ filter: /^elk-worker-source$/ }, () => ({
      path: resolve(here, "node_modules/elkjs/lib/elk-worker.min.js"),
      namespace: "elk-worker",
    }));
    b.onLoad({ filter: /.*/, namespace: "elk-worker" }, async (args) => ({
      contents: await readFile(args.path, "utf8"),
      loader: "text",
    }));
  },
};

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
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
  plugins: [elkWorkerSource],
};

if (process.argv.includes("--watch")) {
  const ctx = await context({ ...options, minify: false });
  await ctx.watch();
} else {
  await build(options);
}
