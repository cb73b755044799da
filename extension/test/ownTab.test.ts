import { describe, expect, it } from "vitest";

import {
  CAN_OPEN_TAB,
  type CanOpenTabDetail,
  OPEN_TAB,
  type OpenTabDetail,
  hostCanOpenTab,
  requestOwnTab,
  tabTitle,
} from "../src/wire/ownTab";

/** A host as graphlab's JupyterLab extension is one: it answers both events on the element's path. */
function host(target: EventTarget, able: boolean): CustomEvent<OpenTabDetail>[] {
  const opened: CustomEvent<OpenTabDetail>[] = [];
  target.addEventListener(CAN_OPEN_TAB, (event) => {
    (event as CustomEvent<CanOpenTabDetail>).detail.able = able;
  });
  target.addEventListener(OPEN_TAB, (event) => {
    const open = event as CustomEvent<OpenTabDetail>;
    opened.push(open);
    open.detail.accepted = able;
  });
  return opened;
}

describe("open in its own tab", () => {
  it("is not offered where no host answers (Notebook 7, VS Code, other anywidget hosts)", () => {
    const el = new EventTarget();
    expect(hostCanOpenTab(el)).toBe(false);
    expect(requestOwnTab(el, "mpm88")).toBe(false);
  });

  it("is offered only when the host says it can place this widget", () => {
    const inCell = new EventTarget();
    host(inCell, true);
    expect(hostCanOpenTab(inCell)).toBe(true);
    const inClonedView = new EventTarget();
    host(inClonedView, false);
    expect(hostCanOpenTab(inClonedView)).toBe(false);
  });

  it("asks the host with an event that bubbles out of the widget, titled after the graph", () => {
    const el = new EventTarget();
    const opened = host(el, true);
    expect(requestOwnTab(el, "mpm88")).toBe(true);
    expect(opened).toHaveLength(1);
    const [event] = opened as [CustomEvent<OpenTabDetail>];
    expect(event.bubbles).toBe(true);
    expect(event.composed).toBe(true);
    expect(event.detail).toEqual({ title: "graph mpm88", accepted: true });
  });

  it("titles a graph without a name still readably", () => {
    expect(tabTitle("  ")).toBe("graphlab editor");
    expect(tabTitle(" fluid ")).toBe("graph fluid");
  });
});
