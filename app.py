"""Start the costa web app: build the shared services from the environment and launch the UI."""

from __future__ import annotations

import os
import signal
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub retries unless the user opts in to downloads
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # nothing leaves the machine behind the user's back


def main() -> None:
    import atexit
    import shutil

    from costa.config import Settings, listen_address
    from costa.errors import InputError

    try:  # before Gradio is imported: it reads GRADIO_SERVER_PORT itself and would fail with a traceback
        settings = Settings.from_env()
        host, port = listen_address()
    except InputError as e:  # a bad setting is a one-line message and exit code 2, never a traceback
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    # Gradio's upload/download cache goes under COSTA_HOME/tmp, named for this process, so it is removed at exit and,
    # if this process is killed, by the next start (before gradio is imported: it reads the folder from here)
    from costa.errors import StorageError
    from costa.session.runtime import RUN_PREFIX
    from costa.store import private_dir
    from costa.store.check import start_fault

    try:
        cache = private_dir(settings.home / "tmp" / f"{RUN_PREFIX}{os.getpid()}-gradio")
    except StorageError as e:  # a read-only or full COSTA_HOME: one line, exit 2
        print(f"error: {start_fault(settings.home, e)}", file=sys.stderr)
        sys.exit(2)
    os.environ["GRADIO_TEMP_DIR"] = str(cache)
    atexit.register(shutil.rmtree, cache, True)
    os.umask(0o077)  # every file the app writes (store, exports, Gradio's cache) is readable by its owner only

    from costa.services import Services
    from costa.session import SessionCore
    from ui.app import build_ui, launch_kwargs, queue_kwargs

    if settings.allow_downloads:
        os.environ.pop("HF_HUB_OFFLINE", None)
    services = Services(settings)
    try:  # a damaged, missing or unwritable store is one line and exit 2, and nothing in it is touched
        core = SessionCore(services)
        core.start()  # turns a killed process left running → interrupted; a killed write's files removed
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    demo = build_ui(services, core)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so exit handlers remove per-session temporary files
    demo.queue(**queue_kwargs(services)).launch(
        server_name=host,
        server_port=port,
        **launch_kwargs(services, core),
    )


if __name__ == "__main__":
    main()
