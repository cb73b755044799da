/** The text of elkjs's worker script, bundled by build.mjs (see canvas/elkWorker.ts). */
declare module "elk-worker-source" {
  const source: string;
  export default source;
}
