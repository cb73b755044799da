/**
 * What the side panel asks of each of its tabs' sections. A module of its own so the panels and the
 * side panel that holds them depend on it, not on each other.
 */

import type { ViewState } from "../logic/state";

export interface Section {
  readonly el: HTMLElement;
  update(state: ViewState): void;
  dispose(): void;
}
