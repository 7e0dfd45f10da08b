"""The Models tab's text: present or missing, sizes, and the exact command when downloads are off."""

from __future__ import annotations

from pathlib import Path

from costa.models.manage import ModelRow
from ui.models_panel import models_markdown

ROWS = [
    ModelRow("facebook/sam-vit-base", ("sam", "sam_points"), False, "not found", 358.0, ""),
    ModelRow("u2net.onnx", ("rembg_u2net",), True, "/m/u2net.onnx", 4.4, "COSTA_MODELS_DIR"),
]


def test_missing_models_come_with_the_exact_command_when_downloads_are_off() -> None:
    text = models_markdown(ROWS, allowed=False, models_dir="/m")
    assert "**1 of 2 models present.**" in text and "358 MB" in text and "✅ present" in text
    assert "COSTA_MODELS_DIR=/m python -m costa models pull facebook/sam-vit-base --yes" in text
    assert "pull u2net.onnx" not in text  # present: nothing to do
    assert "python -m costa models pull" not in models_markdown(ROWS, allowed=True, models_dir="/m")  # Pull instead


def test_the_tab_offers_pull_exactly_when_settings_allow_downloads(tmp_path: Path) -> None:
    """The tab read COSTA_ALLOW_DOWNLOADS itself and took only "1", while Settings (what `pull` and the app's
    HF_HUB_OFFLINE follow) also takes "true" and "yes": with "true" the tab said downloads were off while they were
    on."""
    import gradio as gr

    from costa.config import Settings
    from costa.services import Services
    from ui.models_panel import build_models

    for value, allowed in (("true", True), ("1", True), ("yes", True), ("", False), ("0", False)):
        settings = Settings.from_env({"COSTA_HOME": str(tmp_path), "COSTA_ALLOW_DOWNLOADS": value})
        assert settings.allow_downloads is allowed
        with gr.Blocks():
            tab = build_models(Services(settings))
        assert tab.pull.visible is allowed and tab.choice.visible is allowed, value
        assert ("Downloads are off" in str(tab.table.value)) is not allowed, value
