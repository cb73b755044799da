// JupyterLab's viewer of graphlab graph files: double-clicking a `.graph.json` shows its Graphviz
// drawing (made by the Jupyter server extension graphlab.fileview, no kernel needed), with a button
// that opens a notebook whose first cell loads the file into `gl.editor`. A second plugin (ownTab.ts)
// opens an editor widget in its own main-area tab when the widget asks.
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from "@jupyterlab/application";
import { ToolbarButton } from "@jupyterlab/apputils";
import { PathExt, URLExt } from "@jupyterlab/coreutils";
import { ABCWidgetFactory, DocumentWidget, type DocumentRegistry } from "@jupyterlab/docregistry";
import { ServerConnection } from "@jupyterlab/services";
import { Widget } from "@lumino/widgets";

import { ROUTE } from "./hostContract.gen"; // the server extension's route (graphlab/fileview/contract.py)
import { ownTabPlugin } from "./ownTab";

const FILE_TYPE = "graphlab-graph";
const SUFFIX = ".graph.json";
const FACTORY = "graphlab graph";

/** What the server answers: the drawing, and the first cell of the notebook that loads the file. */
interface Drawing {
  svg: string;
  cell: string;
}

async function fetchDrawing(path: string): Promise<Drawing> {
  const settings = ServerConnection.makeSettings();
  const url = `${URLExt.join(settings.baseUrl, ROUTE)}?path=${encodeURIComponent(path)}`;
  const response = await ServerConnection.makeRequest(url, {}, settings);
  const body = (await response.json().catch(() => null)) as Partial<Drawing> & { message?: string };
  if (!response.ok || body === null || typeof body.svg !== "string" || typeof body.cell !== "string") {
    if (response.status === 404 && !body?.message) {
      throw new Error(
        "the graphlab server extension is not enabled: restart Jupyter after installing graphlab, " +
          "or run 'jupyter server extension enable graphlab.fileview'",
      );
    }
    throw new Error(body?.message ?? `${response.status} ${response.statusText}`);
  }
  return { svg: body.svg, cell: body.cell };
}

/** The SVG element of Graphviz's output, without anything that could run (it has none; a guard). */
function svgElement(text: string): Element {
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg") throw new Error("the server's drawing is not an SVG image");
  svg.querySelectorAll("script, foreignObject").forEach((node) => node.remove());
  for (const node of [svg, ...svg.querySelectorAll("*")]) {
    for (const attr of [...node.attributes]) if (attr.name.startsWith("on")) node.removeAttribute(attr.name);
  }
  return document.importNode(svg, true);
}

/** The drawing of one graph file, redrawn whenever the file is saved or reverted. */
class GraphView extends Widget {
  private cell: string | null = null;

  constructor(private readonly context: DocumentRegistry.Context) {
    super();
    this.addClass("gl-fileview");
    void context.ready.then(() => this.refresh());
    context.fileChanged.connect(() => void this.refresh());
  }

  async refresh(): Promise<void> {
    this.node.dataset.state = "loading";
    try {
      const drawing = await fetchDrawing(this.context.localPath);
      this.cell = drawing.cell;
      const note = document.createElement("p");
      note.className = "gl-fileview-note";
      note.textContent =
        "Drawn from the file alone: which kernel reads or writes each buffer shows once the kernels " +
        "are loaded (Open in notebook).";
      this.node.replaceChildren(note, svgElement(drawing.svg));
      this.node.dataset.state = "drawn";
    } catch (error) {
      const message = document.createElement("pre");
      message.className = "gl-fileview-error";
      message.textContent = error instanceof Error ? error.message : String(error);
      this.node.replaceChildren(message);
      this.node.dataset.state = "error";
    }
  }

  /** A new notebook next to the file (never over an existing one) whose first cell loads it. */
  async openNotebook(app: JupyterFrontEnd): Promise<void> {
    if (this.cell === null) await this.refresh();
    if (this.cell === null) return;
    const contents = app.serviceManager.contents;
    const dir = PathExt.dirname(this.context.path);
    const stem = PathExt.basename(this.context.path, SUFFIX);
    let path = PathExt.join(dir, `${stem}.ipynb`);
    for (let i = 1; await exists(contents, path); i++) path = PathExt.join(dir, `${stem}-${i}.ipynb`);
    await contents.save(path, { type: "notebook", format: "json", content: notebook(this.cell) });
    await app.commands.execute("docmanager:open", { path, factory: "Notebook" });
  }
}

async function exists(contents: JupyterFrontEnd["serviceManager"]["contents"], path: string): Promise<boolean> {
  try {
    await contents.get(path, { content: false });
    return true;
  } catch {
    return false;
  }
}

function notebook(source: string): object {
  return {
    cells: [{ cell_type: "code", id: "graphlab-load", metadata: {}, source, outputs: [], execution_count: null }],
    metadata: { kernelspec: { name: "python3", display_name: "Python 3 (ipykernel)", language: "python" } },
    nbformat: 4,
    nbformat_minor: 5,
  };
}

class GraphViewFactory extends ABCWidgetFactory<DocumentWidget<GraphView>> {
  constructor(
    private readonly app: JupyterFrontEnd,
    options: DocumentRegistry.IWidgetFactoryOptions<DocumentWidget<GraphView>>,
  ) {
    super(options);
  }

  protected createNewWidget(context: DocumentRegistry.Context): DocumentWidget<GraphView> {
    const content = new GraphView(context);
    const widget = new DocumentWidget({ content, context });
    widget.toolbar.addItem(
      "graphlab-open-notebook",
      new ToolbarButton({
        label: "Open in notebook",
        className: "gl-open-notebook",
        tooltip: "A new notebook next to this file, its first cell loading the graph into gl.editor",
        onClick: () => void content.openNotebook(this.app),
      }),
    );
    widget.toolbar.addItem(
      "graphlab-redraw",
      new ToolbarButton({ label: "Redraw", tooltip: "Draw the file again", onClick: () => void content.refresh() }),
    );
    return widget;
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: "graphlab-fileview:plugin",
  description: "Opens graphlab graph files (.graph.json) drawn, and in a notebook",
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    app.docRegistry.addFileType({
      name: FILE_TYPE,
      displayName: "graphlab graph",
      extensions: [SUFFIX],
      pattern: "^.*\\.graph\\.json$",
      mimeTypes: ["application/json"],
      contentType: "file",
      fileFormat: "text",
    });
    app.docRegistry.addWidgetFactory(
      new GraphViewFactory(app, {
        name: FACTORY,
        label: "graphlab graph",
        fileTypes: [FILE_TYPE],
        defaultFor: [FILE_TYPE],
        readOnly: true,
      }),
    );
  },
};

export default [plugin, ownTabPlugin];
