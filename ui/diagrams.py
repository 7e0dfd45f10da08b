"""Mermaid diagrams drawn without errors: the page script that makes Gradio's Markdown draw them safely.

Gradio's Markdown draws a ```mermaid block in place: it calls `mermaid.run` on the block's element, which lays the
diagram out inside that element and then looks the drawing up in the document by id. When the Markdown is updated
again while a drawing is under way (a turn streams several diagram updates a second, and a tab switch remounts its
content), the element is no longer in the document when Mermaid looks for it and the browser console logs
"Cannot read properties of null (reading 'getAttribute')". Mermaid's own ids are `mermaid-<Date.now()>`, so two
diagrams started in the same millisecond also share an id.

`page_js()` returns a function for `launch(js=…)` that imports the very module Gradio uses (its file name is read
from Gradio's installed frontend, so it is the same URL and the same module instance) and replaces its `run` with
one that, for each element: marks it processed at once (a second call while the first is drawing skips it), draws
the diagram with `mermaid.render` under a page-unique id into Mermaid's own temporary element attached to the
document body (so layout never depends on whether the target is visible or still attached), one drawing at a time,
and swaps the finished SVG in only if the element is still in the document; a superseded element's drawing is
dropped silently. Until its drawing is ready an element shows the last drawing of the same component (its nearest
ancestor with an id), or nothing, rather than the diagram's source text; it has the class `costa-pending` until its
own drawing is in (`DRAWN` selects drawn diagrams, for tests). A diagram whose source does not parse still raises,
as before.
Without Gradio's Mermaid module (another Gradio build), the script does nothing and Gradio's own drawing is used.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

#: CSS selector of a Mermaid diagram drawn from its element's own source (not a placeholder), e.g. f"#tree {DRAWN}".
DRAWN = ".mermaid:not(.costa-pending) svg"

_SCRIPT = """
() => {
  const file = __FILE__;
  if (!file || window.__costaMermaid) return;
  window.__costaMermaid = {drawn: 0, dropped: 0};
  const entry = document.querySelector('script[type="module"][src*="/assets/"]');
  const url = new URL(file, entry ? entry.src : new URL("assets/", document.baseURI)).href;
  const decode = (html) => {
    const box = document.createElement("textarea");
    box.innerHTML = html.replace(/<br\\s*\\/?>/gi, "<br/>");
    return box.value.trim();
  };
  const sources = new WeakMap();
  const lastDrawn = new WeakMap();
  let chain = Promise.resolve();
  let serial = 0;
  import(url).then(({default: mermaid}) => {
    if (!mermaid || typeof mermaid.render !== "function" || mermaid.__costa) return;
    mermaid.__costa = true;
    const stats = window.__costaMermaid;
    const drawOne = async (node) => {
      const source = sources.get(node);
      const id = `costa-mermaid-${++serial}`;
      try {
        const {svg, bindFunctions} = await mermaid.render(id, source);
        if (!node.isConnected) { stats.dropped++; return; }
        node.innerHTML = svg;
        node.style.color = "";
        node.classList.remove("costa-pending");
        lastDrawn.set(node.parentElement?.closest("[id]") || document.body, svg);
        if (bindFunctions) bindFunctions(node);
        stats.drawn++;
      } catch (err) {
        if (!node.isConnected) { stats.dropped++; return; }
        node.classList.remove("costa-pending");
        node.style.color = "";
        node.textContent = source;  // what could not be drawn, as Gradio shows it
        throw err;
      } finally {
        document.getElementById("d" + id)?.remove();
      }
    };
    mermaid.run = async (options = {}) => {
      const nodes = options.nodes
        ? Array.from(options.nodes)
        : Array.from(document.querySelectorAll(options.querySelector || ".mermaid"));
      const todo = nodes.filter((n) => n && !n.getAttribute("data-processed"));
      for (const node of todo) {
        node.setAttribute("data-processed", "true");
        sources.set(node, decode(node.innerHTML));
        node.classList.add("costa-pending");
        const previous = lastDrawn.get(node.parentElement?.closest("[id]") || document.body);
        if (previous) node.innerHTML = previous;  // the component's last drawing until the new one is ready
        else node.style.color = "transparent";  // not the diagram's source text
      }
      const done = chain.then(async () => {
        let first = null;
        for (const node of todo) {
          try { await drawOne(node); } catch (err) { first = first || err; }
        }
        if (first) throw first;
      });
      chain = done.catch(() => {});
      return done;
    };
  }).catch(() => {});
}
"""


@cache
def mermaid_module() -> str | None:
    """The file name of Gradio's bundled Mermaid module (`mermaid.core-<hash>.js`), or None when not found."""
    import gradio

    assets = Path(gradio.__file__).parent / "templates" / "frontend" / "assets"
    found = sorted(p.name for p in assets.glob("mermaid.core-*.js"))
    return found[0] if len(found) == 1 else None


def page_js() -> str:
    """The function for `launch(js=…)` that makes every Mermaid diagram on the page draw safely (module docstring)."""
    return _SCRIPT.replace("__FILE__", json.dumps(mermaid_module()))
