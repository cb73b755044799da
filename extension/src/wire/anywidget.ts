/**
 * The part of anywidget's front-end contract this widget uses, typed over our own traits.
 *
 * anywidget hands `render` a Backbone-like model; only these calls are relied upon. The types are
 * written here (not taken from `@anywidget/types`) to keep jQuery and Backbone typings out of the
 * dependency tree.
 */

type Handler = (...args: never[]) => void;

export interface WidgetModel<T extends object> {
  get<K extends keyof T & string>(key: K): T[K];
  set<K extends keyof T & string>(key: K, value: T[K]): void;
  save_changes(): void;
  on(event: `change:${keyof T & string}`, callback: () => void): void;
  on(event: "msg:custom", callback: (content: unknown, buffers: DataView[]) => void): void;
  off(event?: string | null, callback?: Handler | (() => void) | null): void;
  send(content: object, callbacks?: unknown, buffers?: ArrayBuffer[] | ArrayBufferView[]): void;
}

export interface RenderProps<T extends object> {
  model: WidgetModel<T>;
  el: HTMLElement;
}

export type Cleanup = () => void;
