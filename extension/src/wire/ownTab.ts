/**
 * The widget's half of the "open in its own tab" handshake with graphlab's JupyterLab extension
 * (labextension/src/ownTab.ts; both import the event names from hostContract.gen.ts). The widget cannot open a tab
 * itself and must not reach for a host's globals: it asks with DOM events dispatched from its own
 * element, and only a host that listens (JupyterLab with the extension) answers. Elsewhere
 * (Notebook 7, VS Code, other anywidget hosts) nobody answers and the action stays hidden.
 */

import { CAN_OPEN_TAB, OPEN_TAB, TAB_HOST_READY } from "./hostContract.gen";

// The event names are declared once, in graphlab/fileview/contract.py (hostContract.gen.ts is generated).
export { CAN_OPEN_TAB, OPEN_TAB, TAB_HOST_READY };

/** What `CAN_OPEN_TAB` carries: the host sets `able` while the event is dispatched. */
export interface CanOpenTabDetail {
  able: boolean;
}

/** What `OPEN_TAB` carries: the tab's title; the host sets `accepted` when it takes the request. */
export interface OpenTabDetail {
  title: string;
  accepted: boolean;
}

/** Whether a host will open the output holding `from` in its own tab (false when none answers). */
export function hostCanOpenTab(from: EventTarget): boolean {
  const detail: CanOpenTabDetail = { able: false };
  from.dispatchEvent(new CustomEvent(CAN_OPEN_TAB, { bubbles: true, composed: true, detail }));
  return detail.able;
}

/** Ask the host to open the output holding `from` in its own tab; whether a host took the request. */
export function requestOwnTab(from: EventTarget, graphName: string): boolean {
  const detail: OpenTabDetail = { title: tabTitle(graphName), accepted: false };
  from.dispatchEvent(new CustomEvent(OPEN_TAB, { bubbles: true, composed: true, detail }));
  return detail.accepted;
}

/** The tab's title: the graph's name, so several editors' tabs can be told apart. */
export function tabTitle(graphName: string): string {
  const name = graphName.trim();
  return name === "" ? "graphlab editor" : `graph ${name}`;
}
