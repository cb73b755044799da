/**
 * graphlab's notebook widget: the front-end module anywidget loads as `GraphEditor._esm`.
 */

import "./widget.css";

import type { Cleanup, RenderProps } from "./wire/anywidget";
import { mount } from "./app";
import type { Traits } from "./wire/protocol";

/** Draw the editor into `el`; the returned function removes it and every listener it added. */
function render({ model, el }: RenderProps<Traits>): Cleanup {
  return mount(model, el);
}

// anywidget >= 0.9 takes the default export; a named `render` export draws a deprecation warning.
export default { render };
