// The host's half of the editor widget's "open in its own tab" handshake (the widget's half, with the
// same event names from graphlab/fileview/contract.py, is extension/src/wire/ownTab.ts). The widget dispatches DOM events from its element;
// this plugin answers them for widgets drawn in a notebook cell, and opens a tab with JupyterLab's own
// "Create New View for Cell Output" command: a second view of the same output, so of the same widget
// model, and both views stay in sync. Only JupyterLab: Jupyter Notebook 7 shows one document per
// browser tab, so there the widget's button stays hidden.
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from "@jupyterlab/application";
import type { Widget } from "@lumino/widgets";

import { CAN_OPEN_TAB, OPEN_TAB, TAB_HOST_READY } from "./hostContract.gen";

/** JupyterLab's command behind a cell's "Create New View for Cell Output" menu entry. */
const CLONE_OUTPUT = "notebook:create-output-view";

interface CanOpenTabDetail {
  able: boolean;
}

interface OpenTabDetail {
  title: string;
  accepted: boolean;
}

/** What a notebook panel offers (looked up by shape, so this package needs no @jupyterlab/notebook). */
interface NotebookParts {
  context: { path: string };
  content: { widgets: readonly Widget[] };
}
type NotebookLike = Widget & NotebookParts;

function isNotebook(widget: Widget): widget is NotebookLike {
  const candidate = widget as Partial<NotebookParts>;
  return typeof candidate.context?.path === "string" && Array.isArray(candidate.content?.widgets);
}

/** The notebook path and cell index whose output holds `el`; null outside a notebook cell (a cloned view). */
function cellOf(app: JupyterFrontEnd, el: Node): { path: string; index: number } | null {
  for (const widget of app.shell.widgets("main")) {
    if (!widget.node.contains(el) || !isNotebook(widget)) continue;
    const index = widget.content.widgets.findIndex((cell) => cell.node.contains(el));
    if (index >= 0) return { path: widget.context.path, index };
  }
  return null;
}

async function openTab(app: JupyterFrontEnd, where: { path: string; index: number }, title: string): Promise<void> {
  const before = new Set(app.shell.widgets("main"));
  await app.commands.execute(CLONE_OUTPUT, where);
  const added = [...app.shell.widgets("main")].find((widget) => !before.has(widget));
  if (!added) return;
  added.title.label = title;
  added.title.caption = `${title}: a second live view of the editor in ${where.path}`;
  added.addClass("gl-own-tab");
  app.shell.activateById(added.id);
}

export const ownTabPlugin: JupyterFrontEndPlugin<void> = {
  id: "graphlab-fileview:own-tab",
  description: "Opens a graphlab editor widget in its own main-area tab when the widget asks",
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    if (app.name !== "JupyterLab") return;
    document.addEventListener(CAN_OPEN_TAB, (event) => {
      const detail = (event as CustomEvent<CanOpenTabDetail>).detail;
      if (!app.commands.hasCommand(CLONE_OUTPUT) || !(event.target instanceof Node)) return;
      if (cellOf(app, event.target)) detail.able = true;
    });
    document.addEventListener(OPEN_TAB, (event) => {
      const detail = (event as CustomEvent<OpenTabDetail>).detail;
      const where = event.target instanceof Node ? cellOf(app, event.target) : null;
      if (!where || !app.commands.hasCommand(CLONE_OUTPUT)) return;
      detail.accepted = true;
      void openTab(app, where, detail.title).catch((error: unknown) => {
        console.error("graphlab: could not open the editor in its own tab", error);
      });
    });
    window.dispatchEvent(new CustomEvent(TAB_HOST_READY));
  },
};
