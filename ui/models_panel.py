"""The Models tab: each neural model, the tools that need it, its size, present or missing, and how to get it.

With `COSTA_ALLOW_DOWNLOADS=1` (and `COSTA_MODELS_DIR` set) a Pull button downloads the chosen models with a progress
bar; otherwise the tab shows the exact command to run. Everything comes from `costa.models.manage` (the same rows as
`python -m costa models list`); nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from costa.models.manage import ModelRow, list_models
from costa.services import Services
from ui.state import page_errors


@dataclass
class ModelsTab:
    table: gr.Markdown
    choice: gr.Dropdown
    pull: gr.Button
    log: gr.Markdown


def _size(mb: float) -> str:
    return f"{mb / 1024:.1f} GB" if mb >= 1024 else (f"{mb:,.0f} MB" if mb >= 1 else f"{mb * 1024:,.0f} KB")


def models_markdown(rows: Sequence[ModelRow], allowed: bool, models_dir: str | None) -> str:
    """The table and what to do next, as Markdown."""
    lines = [
        f"**{sum(r.present for r in rows)} of {len(rows)} models present.** The CPU tools need none of these; each "
        "neural tool below needs its model (and the diffusion ones a GPU to be quick).",
        "",
        "| model | for | size | state |",
        "|---|---|---|---|",
    ]
    for r in rows:
        state = f"✅ present ({r.source})" if r.present else "❌ missing"
        lines.append(f"| `{r.model_id}` | {', '.join(r.tools)} | {_size(r.size_mb)} | {state} |")
    missing = [r.model_id for r in rows if not r.present]
    if missing and not allowed:
        where = f"COSTA_MODELS_DIR={models_dir} " if models_dir else "COSTA_MODELS_DIR=/path/to/models "
        lines += [
            "",
            "Downloads are off (`COSTA_ALLOW_DOWNLOADS` is not `1`). To get a model, run:",
            "",
            "```",
            *(f"{where}python -m costa models pull {m} --yes" for m in missing),
            "```",
            "then restart the app (or start it with `COSTA_ALLOW_DOWNLOADS=1` to pull from here).",
        ]
    return "\n".join(lines)


def build_models(services: Services) -> ModelsTab:
    settings = services.settings
    rows = list_models(services.tables, settings)
    allowed = settings.allow_downloads  # the one reading of COSTA_ALLOW_DOWNLOADS (Settings)
    with gr.Tab("Models", elem_id="models-tab"):
        table = gr.Markdown(
            models_markdown(rows, allowed, str(settings.models_dir) if settings.models_dir else None),
            elem_id="models-table",
        )
        choice = gr.Dropdown(
            [r.model_id for r in rows if not r.present], multiselect=True, label="Models to pull",
            visible=allowed, elem_id="models-choice",
        )  # fmt: skip
        pull = gr.Button("Pull", variant="primary", visible=allowed, elem_id="models-pull")
        log = gr.Markdown(elem_id="models-log")
    tab = ModelsTab(table, choice, pull, log)
    _wire(tab, services)
    return tab


def _wire(tab: ModelsTab, services: Services) -> None:
    settings = services.settings

    @page_errors
    def on_pull(names: list[str] | None, progress: gr.Progress = gr.Progress()) -> dict[Any, Any]:  # noqa: B008
        from costa.errors import CostaError
        from costa.models.weights import pull

        said = []
        chosen = list(names or ())
        if not chosen:
            return {tab.log: "Choose the models to pull first."}
        for k, name in enumerate(progress.tqdm(chosen, desc="pulling")):
            try:
                said.append(f"✅ {name} → {pull(name, settings)}")
            except CostaError as e:
                said.append(f"❌ {name}: {e}")
            progress((k + 1) / len(chosen))
        rows = list_models(services.tables, settings)
        return {
            tab.log: "\n\n".join(said),
            tab.table: models_markdown(rows, True, str(settings.models_dir) if settings.models_dir else None),
            tab.choice: gr.update(choices=[r.model_id for r in rows if not r.present], value=[]),
        }

    tab.pull.click(on_pull, [tab.choice], [tab.log, tab.table, tab.choice], api_visibility="private")
