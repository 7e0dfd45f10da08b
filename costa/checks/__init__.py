"""Checks that score every tool step in [0, 1] with reasons, and can fail.

A step that produces its subtask's goal artifact is checked by that subtask's check (`SUBTASK_CHECKS`); an
intermediate step (a detector feeding an editor) is checked by the check for the artifact type it produced
(`ARTIFACT_CHECKS`). For subtasks that edit pixels, the final verdict is the minimum of the subtask check and
`unchanged_outside` around the grounded region the step consumed (`costa.checks.region`), so an edit that damages the
rest of the image fails even when the target looks right, whatever region the tool says it touched; and of what the
instruction keeps as it is (`kept_unchanged`: "… and keep the trees unchanged").
"""

from __future__ import annotations

from collections.abc import Mapping

from costa.checks.context import CheckContext, CheckFn, TextReader
from costa.types import EditState, Subtask, SubtaskSpec, ToolOutput, Verdict

__all__ = ["CheckContext", "CheckFn", "TextReader", "artifact_checks", "check_step", "subtask_checks"]


def subtask_checks() -> Mapping[str, CheckFn]:
    """Final checks by subtask id (imported here, not at module import, to keep `import costa` light)."""
    from costa.checks.background import BACKGROUND_CHECKS
    from costa.checks.geometry import GEOMETRY_CHECKS
    from costa.checks.image import IMAGE_CHECKS
    from costa.checks.objects import OBJECT_CHECKS
    from costa.checks.privacy import PRIVACY_CHECKS
    from costa.checks.readouts import READOUT_CHECKS
    from costa.checks.text import TEXT_CHECKS

    return {
        **TEXT_CHECKS,
        **OBJECT_CHECKS,
        **PRIVACY_CHECKS,
        **BACKGROUND_CHECKS,
        **IMAGE_CHECKS,
        **GEOMETRY_CHECKS,
        **READOUT_CHECKS,
    }


def artifact_checks() -> Mapping[str, CheckFn]:
    """Checks of intermediate outputs by artifact type."""
    from costa.checks.objects import OBJECT_ARTIFACT_CHECKS
    from costa.checks.text import TEXT_ARTIFACT_CHECKS

    return {**TEXT_ARTIFACT_CHECKS, **OBJECT_ARTIFACT_CHECKS}


def check_step(
    ctx: CheckContext,
    spec: SubtaskSpec,
    subtask: Subtask,
    produced: tuple[str, ...],
    before: EditState,
    after: EditState,
    output: ToolOutput,
) -> Verdict:
    """Score one tool step.

    Args:
        spec: the subtask's table row (its goal artifact type and whether it edits pixels).
        produced: artifact types the tool declares as outputs.
        before, after: the edit state before and after the step.
    """
    final = spec.produces in produced
    if final:
        checks = subtask_checks()
        if spec.id not in checks:
            return Verdict(0.0, (f"no check exists for subtask {spec.id!r}, so its result cannot be trusted",))
        verdict = checks[spec.id](ctx, subtask, before, after, output)
        if spec.edits_image and output.image is not None:
            from costa.checks.region import outside as outside_check

            # A whole-image kind whose target is an object (background removal) keeps that target and changes the
            # rest; one whose target only limits where it acts (an adjustment or a deblur of "the rose") changes
            # the inside of that region and must leave the outside alone, like any regional edit.
            keeps_target = spec.whole_image and spec.target == "object"
            as_whole = keeps_target or (spec.whole_image and not subtask.target)
            outside = outside_check(subtask, before, after, output, whole_image=as_whole)
            verdict = Verdict(min(verdict.quality, outside.quality), verdict.reasons + outside.reasons)
            from costa.checks.region import kept_unchanged

            kept = kept_unchanged(subtask, before, after)  # "… and keep the trees unchanged"
            if kept is not None:
                verdict = Verdict(min(verdict.quality, kept.quality), verdict.reasons + kept.reasons)
        return verdict
    by_type = artifact_checks()
    verdicts = [by_type[t](ctx, subtask, before, after, output) for t in produced if t in by_type and t != "image"]
    if not verdicts:
        return Verdict(1.0, ("intermediate output has no specific check",))
    return Verdict(min(v.quality for v in verdicts), tuple(r for v in verdicts for r in v.reasons))
