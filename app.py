"""Start the costa web app: build the shared services from the environment and launch the UI."""

from __future__ import annotations

import os
import signal
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub retries unless the user opts in to downloads
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # nothing leaves the machine behind the user's back


def main() -> None:
    from costa.config import Settings, listen_address
    from costa.errors import InputError

    try:  # before Gradio is imported: it reads GRADIO_SERVER_PORT itself and would fail with a traceback
        settings = Settings.from_env()
        host, port = listen_address()
    except InputError as e:  # a bad setting is a one-line message and exit code 2, never a traceback
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)

    from costa.services import Services
    from ui.app import build_ui, launch_kwargs, queue_kwargs

    if settings.allow_downloads:
        os.environ.pop("HF_HUB_OFFLINE", None)
    services = Services(settings)
    demo = build_ui(services)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so exit handlers remove per-session temporary files
    demo.queue(**queue_kwargs(services)).launch(
        server_name=host,
        server_port=port,
        **launch_kwargs(services),
    )


if __name__ == "__main__":
    main()
