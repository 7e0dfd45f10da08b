"""Start the costa web app: build the shared services from the environment and launch the UI."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub retries unless the user opts in to downloads


def main() -> None:
    from costa.config import Settings
    from costa.services import Services
    from ui.app import build_ui

    settings = Settings.from_env()
    if settings.allow_downloads:
        os.environ.pop("HF_HUB_OFFLINE", None)
    demo = build_ui(Services(settings))
    demo.queue(default_concurrency_limit=2).launch(
        server_name=os.environ.get("COSTA_HOST", "127.0.0.1"),
        server_port=int(os.environ.get("COSTA_PORT", "7860")),
    )


if __name__ == "__main__":
    main()
