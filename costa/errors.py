"""One error hierarchy for costa.

`CostaError` is the root. User mistakes (bad image, bad box, empty instruction) raise `InputError`; broken tables raise
`TableError`; a tool that cannot do its job raises `ToolError`, which the agent records as a failed step the search
routes around. Anything else escaping costa is a bug in costa and should surface as such.
"""

from __future__ import annotations


class CostaError(Exception):
    """Root of every error costa raises on purpose."""


class InputError(CostaError, ValueError):
    """The user's input (image, instruction, region, option) is unusable; the message says which value and why."""


class TableError(CostaError):
    """A tool table is malformed; the message names the file and the row."""


class ToolError(CostaError):
    """A tool failed on this input (no text found, empty mask…): a recorded result, not a crash."""


class ToolUnavailableError(ToolError):
    """A tool's package, weights or device is missing; the message says what would enable it."""


class SearchError(CostaError):
    """The search was asked something impossible (α outside [0, 2], unknown node)."""


class PlanningError(CostaError):
    """No plan could be made from the instruction; the message says why."""


class GroundingError(ToolError):
    """A grounding tool could not find the subtask's target on this backend.

    `advice` says what would ground it (the neural detector, a click or a box); the agent shows it once at the end of
    a failed turn, however many grounders said the same. `deterministic` says the refusal depends on the target's
    words only, not on the tool's parameters, so a retry with other parameters would refuse the same way.
    """

    def __init__(self, reason: str, advice: str = "", deterministic: bool = False) -> None:
        super().__init__(f"{reason}. {advice}" if advice else reason)
        self.reason = reason
        self.advice = advice
        self.deterministic = deterministic


class StorageError(InputError):
    """COSTA_HOME's disk or database cannot do what was asked (full, read-only, damaged, busy): one sentence saying
    what happened and what was kept; nothing was half-written."""


class QuotaError(InputError):
    """A per-owner limit (sessions, versions, bytes) or the per-turn pixel budget would be exceeded: nothing was
    stored; the message names the limit and the setting that raises it."""
