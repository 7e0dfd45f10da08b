"""The session core shared by the page, the API, the CLI and the benchmarks (see `costa.session.core`)."""

from costa.session.core import BUSY, Pointing, SessionCore, TurnRequest, Upload, upload_notes
from costa.session.preview import ALPHA_GRID, Preview
from costa.session.turns import MAX_CLICKS, MODES, PlanResult, TurnOptions, parse_clicks, read_brush
from costa.session.view import SubtaskPanel, TurnView

__all__ = [
    "ALPHA_GRID",
    "BUSY",
    "MAX_CLICKS",
    "MODES",
    "PlanResult",
    "Pointing",
    "Preview",
    "SessionCore",
    "SubtaskPanel",
    "TurnOptions",
    "TurnRequest",
    "TurnView",
    "Upload",
    "parse_clicks",
    "read_brush",
    "upload_notes",
]
