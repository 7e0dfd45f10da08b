"""Start the costa web app: build the shared services from the environment and launch the UI."""

from __future__ import annotations

import os
import signal
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub retries unless the user opts in to downloads
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # nothing leaves the machine behind the user's back


def main() -> None:
    from costa.config import Settings
    from costa.services import Services
    from ui.app import build_ui, launch_kwargs, queue_kwargs

    settings = Settings.from_env()
    if settings.allow_downloads:
        os.environ.pop("HF_HUB_OFFLINE", None)
    services = Services(settings)
    demo = build_ui(services)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so exit handlers remove per-session temporary files
    demo.queue(**queue_kwargs(services)).launch(
        server_name=os.environ.get("COSTA_HOST", "127.0.0.1"),
        server_port=int(os.environ.get("COSTA_PORT", "7860")),
        **launch_kwargs(services),
    )


if __name__ == "__main__":
    main()
