"""Offline reflection experts: instruction, preservation and perception. Each a different view of one attempt.

Every expert scores only the dimensions it can judge, on 0–10; the rest are None (not judged) and stay out of its
mean. Inputs are an `Evidence` record: the subtask, the image before it, the state before and after its final step,
the tool's output, and the regions earlier turns (and earlier subtasks of this turn) edited.

- `InstructionExpert` re-runs the subtask's own check (`costa.checks.check_step`), so it inherits every verifier
  (target identity, exact text, colour, coverage): semantic_alignment = 10 × the check's quality.
- `PreservationExpert`: logical_consistency — nothing outside the target changed, and each protected region (an
  earlier edit) is still intact unless this subtask is about it (its edited region overlaps it).
- `PerceptionExpert`: no-reference quality of the edited region relative to the rest of the image — seams, halos,
  clipping, noise, mirrored margins and fills pasted from elsewhere in the image (perceptual_quality) and
  smears/blur and pasted content (aesthetics).

All images RGB uint8 (H, W, 3); masks bool (H, W).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Protocol as TypingProtocol

import numpy as np

from costa.checks import CheckContext, check_step
from costa.checks.fills import fill_cloned_share, surround_variation
from costa.errors import TableError, ToolError
from costa.masks import dilate_mask, erode_mask
from costa.reflect.protocol import ExpertJudgement, Feedback, Protocol
from costa.types import EditState, Subtask, SubtaskSpec, ToolOutput

#: Kinds whose edit is the whole picture by design (they are "about" every earlier region).
from costa.vlm import GLOBAL_KINDS, RESIZING_KINDS


@dataclass(frozen=True)
class ProtectedRegion:
    """A region an earlier edit changed, to be kept intact: which turn and subtask, and its mask (bool H×W)."""

    turn: int
    subtask_id: str
    label: str
    mask: np.ndarray


@dataclass(frozen=True, eq=False)
class Evidence:
    """What the experts see of one attempt at one subtask."""

    subtask: Subtask
    spec: SubtaskSpec
    produced: tuple[str, ...]
    start: np.ndarray  # the image before the subtask
    before: EditState  # the state before the subtask's final step
    after: EditState
    output: ToolOutput
    ctx: CheckContext
    protected: tuple[ProtectedRegion, ...] = ()
    history: tuple[str, ...] = ()  # short lines about earlier turns, for VLM experts

    @property
    def result(self) -> np.ndarray:
        return self.after.image

    def edited_mask(self, level: int = 12) -> np.ndarray | None:
        """The region the step declared, else the pixels that changed by more than `level`; None on a resize."""
        if self.start.shape != self.result.shape:
            return None
        if self.output.edited_region is not None and self.output.edited_region.shape == self.start.shape[:2]:
            return self.output.edited_region.astype(bool)
        return _changed(self.start, self.result, level)


class Expert(TypingProtocol):
    name: str

    def judge(self, evidence: Evidence) -> ExpertJudgement: ...


def _changed(a: np.ndarray, b: np.ndarray, level: int) -> np.ndarray:
    return np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2) > level


def _ramp(value: float, good: float, bad: float) -> float:
    """10 at `good` (or better), 0 at `bad` (or worse), linear between; works for either direction."""
    if good == bad:
        return 10.0 if value == good else 0.0
    t = (value - good) / (bad - good)
    return float(10.0 * (1.0 - min(1.0, max(0.0, t))))


def _keep(judges: Sequence[str], scores: dict[str, float | None]) -> dict[str, float | None]:
    """Only the dimensions this expert's table row says it judges; the others are not judged."""
    return {d: (v if d in judges else None) for d, v in scores.items()}


# ------------------------------------------------------------------------------------------------ instruction


@dataclass(frozen=True)
class InstructionExpert:
    """semantic_alignment from the subtask's own check, re-run on the finished result."""

    protocol: Protocol
    name: str = "instruction"

    def judge(self, evidence: Evidence) -> ExpertJudgement:
        e = evidence
        try:
            verdict = check_step(e.ctx, e.spec, e.subtask, e.produced, e.before, e.after, e.output)
        except ToolError as err:
            return ExpertJudgement(self.name, "offline", {}, negative=(Feedback(f"the check could not run: {err}"),))
        score = round(10.0 * verdict.quality, 2)
        reasons = tuple(" ".join(r.split())[:200] for r in verdict.reasons[:4])
        positive: tuple[str, ...] = ()
        negative: tuple[Feedback, ...] = ()
        if verdict.quality >= self.protocol.tau_sr / 10.0:
            positive = reasons[:2] or ("the subtask's check passed",)
        else:
            negative = tuple(Feedback(r, _action_for(r)) for r in reasons) or (Feedback("the check failed"),)
        judges = self.protocol.expert(self.name).judges if self._listed() else ("semantic_alignment",)
        return ExpertJudgement(self.name, "offline", _keep(judges, {"semantic_alignment": score}), positive, negative)

    def _listed(self) -> bool:
        return any(x.name == self.name for x in self.protocol.offline)


_GROUNDING_WORDS = ("target", "ground", "not found", "unverified", "no object", "wrong object", "did not find")


def _action_for(reason: str) -> str:
    """The retry action a check's complaint points to: a grounding problem → another grounder, else another path."""
    low = reason.lower()
    if any(w in low for w in _GROUNDING_WORDS):
        return "other_grounder"
    if "coverage" in low or "covered" in low or "too " in low:
        return "next_params"
    return "other_path"


# ----------------------------------------------------------------------------------------------- preservation


@dataclass(frozen=True)
class PreservationExpert:
    """logical_consistency: nothing outside the target changed; earlier edits intact unless this one is about them."""

    protocol: Protocol
    name: str = "preservation"

    def judge(self, evidence: Evidence) -> ExpertJudgement:
        e = evidence
        p = self.protocol
        level = int(p.option(self.name, "change_level", 12))
        if e.start.shape != e.result.shape:
            return ExpertJudgement(self.name, "offline", {}, ("the size changed: nothing to compare pixel for pixel",))
        changed = _changed(e.start, e.result, level)
        if not e.spec.edits_image:
            share = float(changed.mean())
            ok = share < 0.001
            s = 10.0 if ok else 0.0
            text = f"read-only subtask; {share:.1%} of the pixels changed"
            return ExpertJudgement(
                self.name,
                "offline",
                {"logical_consistency": s},
                (text,) if ok else (),
                () if ok else (Feedback(text, "other_path"),),
            )
        if e.subtask.kind in GLOBAL_KINDS:
            return ExpertJudgement(self.name, "offline", {}, ("a whole-image edit: every region is its target",))
        target = e.edited_mask(level)
        assert target is not None  # sizes are equal here
        grown = dilate_mask(target, 3)
        positive: list[str] = []
        negative: list[Feedback] = []
        scores: list[float] = []
        outside = ~grown
        if outside.any():
            share = float(changed[outside].mean())
            tol = p.option(self.name, "outside_tolerance", 0.01)
            s = _ramp(share, tol, tol + 0.05)
            scores.append(s)
            text = f"{share:.1%} of the pixels outside the target changed (tolerance {tol:.0%})"
            (positive.append(text) if s >= 7 else negative.append(Feedback(text, "next_params")))
        about = p.option(self.name, "about_iou", 0.3)
        tol = p.option(self.name, "earlier_tolerance", 0.02)
        for r in e.protected:
            if r.mask.shape != changed.shape or not r.mask.any():
                continue
            inter = float((r.mask & target).sum())
            iou = inter / float((r.mask | target).sum())
            if iou >= about:
                positive.append(f"this edit is about {r.label}, so it may change it")
                continue
            keep = r.mask & ~grown if inter > 0 else r.mask
            if not keep.any():
                continue
            share = float(changed[keep].mean())
            s = _ramp(share, tol, tol + 0.05)
            scores.append(s)
            when = f"edited in turn {r.turn}" if r.turn > 0 else "edited earlier in this turn"
            text = f"{share:.1%} of {r.label} ({when}) changed"
            if s >= 7:
                positive.append(text + "; it is intact")
            else:
                negative.append(Feedback(text + "; it must stay as it was", "restore_protected"))
        if not scores:
            return ExpertJudgement(self.name, "offline", {}, tuple(positive))
        return ExpertJudgement(
            self.name, "offline", {"logical_consistency": round(min(scores), 2)}, tuple(positive), tuple(negative)
        )


# ------------------------------------------------------------------------------------------------- perception


def _grey(image: np.ndarray) -> np.ndarray:
    return image.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)


def _laplacian(grey: np.ndarray) -> np.ndarray:
    import cv2

    return np.abs(cv2.Laplacian(grey, cv2.CV_32F, ksize=3))


def _gradient(grey: np.ndarray) -> np.ndarray:
    import cv2

    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3) / 8.0
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3) / 8.0
    return np.hypot(gx, gy)


def _clipped(image: np.ndarray, mask: np.ndarray) -> float:
    px = image[mask]
    return float(((px <= 2).all(axis=1) | (px >= 253).all(axis=1)).mean()) if len(px) else 0.0


@dataclass(frozen=True)
class PerceptionExpert:
    """No-reference artifacts of the edit, relative to the rest of the image (and to the image before it)."""

    protocol: Protocol
    name: str = "perception"

    def judge(self, evidence: Evidence) -> ExpertJudgement:
        e = evidence
        if not e.spec.edits_image:
            return ExpertJudgement(self.name, "offline", {}, ("read-only subtask: no pixels to judge",))
        if e.subtask.kind in RESIZING_KINDS or e.start.shape != e.result.shape:
            return self._resized(e)
        level = int(self.protocol.option("preservation", "change_level", 12))
        target = e.edited_mask(level)
        assert target is not None
        changed = _changed(e.start, e.result, level) & dilate_mask(target, 3)
        if not changed.any():
            return ExpertJudgement(
                self.name, "offline", {"perceptual_quality": 10.0}, ("no visible change to judge",), ()
            )
        if e.subtask.kind in self.protocol.kinds(self.name, "by_design"):
            return self._halo_only(e, changed)
        if e.subtask.kind in GLOBAL_KINDS or changed.mean() > 0.6:
            return self._global(e)
        return self._local(e, changed)

    def _halo_only(self, e: Evidence, region: np.ndarray) -> ExpertJudgement:
        """A flat bar, a blur or a plain background is the point: only a halo around it is judged."""
        band = int(self.protocol.option(self.name, "band_px", 4))
        ring = dilate_mask(region, band) & ~dilate_mask(region, 1)
        if not ring.any():
            return ExpertJudgement(self.name, "offline", {}, ("nothing around the edit to judge",))
        moved = float(np.abs(_grey(e.result)[ring] - _grey(e.start)[ring]).mean())
        s = _ramp(moved, 6.0, 25.0)
        text = f"the ring around the edit moved {moved:.0f} grey levels"
        pos = (text + " (the edit's flat or blurred look is intended)",) if s >= 7 else ()
        neg = () if s >= 7 else (Feedback("a halo: " + text, "next_params"),)
        return ExpertJudgement(self.name, "offline", {"perceptual_quality": round(s, 2)}, pos, neg)

    def _local(self, e: Evidence, region: np.ndarray) -> ExpertJudgement:
        p = self.protocol
        band = int(p.option(self.name, "band_px", 4))
        after_g, before_g = _grey(e.result), _grey(e.start)
        inside = erode_mask(region, 1) if erode_mask(region, 1).any() else region
        rest = ~dilate_mask(region, 2 * band)
        if not rest.any():
            return self._global(e)
        positive: list[str] = []
        negative: list[Feedback] = []
        pq: list[float] = []
        aes: list[float] = []
        lap_after = _laplacian(after_g)
        sharp_in = float(lap_after[inside].mean())
        sharp_rest = float(lap_after[rest].mean())
        # Smear: a fill much smoother than the texture right around it (only meaningful where that has texture). The
        # ring, not the whole rest: text removed from a smooth panel on a busy photo is a smooth fill on a smooth panel.
        fill = self.protocol.kinds(self.name, "fill_kinds")
        around = dilate_mask(region, 4 * band) & ~dilate_mask(region, band)
        # Medians: a neighbouring word or an edge in the ring is not the texture a fill should continue (a panel with
        # other letters around the removed word is smooth; its mean Laplacian is the letters').
        sharp_around = float(np.median(lap_after[around])) if around.any() else float(np.median(lap_after[rest]))
        if e.subtask.kind in fill and sharp_around > 2.0:
            ratio = float(np.median(lap_after[inside])) / sharp_around
            smear = p.option(self.name, "smear_ratio", 0.25)
            s = _ramp(ratio, 2 * smear, smear / 2)
            aes.append(s)
            pq.append(s)  # a smear is an artifact as well as ugly
            text = f"texture inside the edit is {ratio:.2f}× the rest's"
            (positive.append(text) if s >= 7 else negative.append(Feedback(text + ": a smear", "other_path")))
        # Pasted content: a fill made of verbatim copies of other places of the image (beyond the image's own
        # self-similarity) shows duplicated objects, not what was behind.
        variation = surround_variation(e.start, region) if e.subtask.kind in fill else None
        if variation is not None and variation >= p.option(self.name, "clone_min_variation", 3.7):
            # only where the surroundings differ from side to side: copied grass into a lawn is the lawn
            cloned = fill_cloned_share(e.result, region)
            least = int(p.option(self.name, "clone_min_blocks", 4))
            if cloned is not None and cloned[1] >= least:
                s = _ramp(
                    cloned[0], p.option(self.name, "clone_share_ok", 0.1), p.option(self.name, "clone_share_bad", 0.3)
                )
                pq.append(s)
                aes.append(s)
                text = (
                    f"{cloned[0]:.0%} of the fill's {cloned[1]} detailed blocks are copies of other places of the image"
                )
                (
                    positive.append(text)
                    if s >= 7
                    else negative.append(Feedback(text + ": pasted content, not what was behind", "other_path"))
                )
        # Noise: far more high-frequency energy inside than the rest and than before.
        before_in = float(_laplacian(before_g)[inside].mean())
        ref = max(sharp_rest, before_in, 2.0)
        ratio = sharp_in / ref
        noise = p.option(self.name, "noise_ratio", 4.0)
        s = _ramp(ratio, noise, 2 * noise)
        pq.append(s)
        if s < 7:
            negative.append(Feedback(f"the edit is {ratio:.1f}× noisier than its surroundings", "next_params"))
        # Seam: a line along the edit's contour, stronger than both sides and than what was there before.
        edge = dilate_mask(region, 1) & ~erode_mask(region, 1)
        ring_in = erode_mask(region, 1) & ~erode_mask(region, 1 + band)
        ring_out = dilate_mask(region, 1 + band) & ~dilate_mask(region, 1)
        if e.subtask.kind in fill and edge.any() and ring_in.any() and ring_out.any():
            grad = _gradient(after_g)
            sides = max(float(grad[ring_in].mean()), float(grad[ring_out].mean()), 1.0)
            seam = float(np.median(grad[edge])) / sides
            s = _ramp(seam, 1.5, 3.5)
            pq.append(s)
            text = f"contour gradient {seam:.1f}× its sides"
            (
                positive.append(text + ": no seam")
                if s >= 7
                else negative.append(Feedback(text + ": a seam", "other_path"))
            )
        # Halo: the ring just outside the edit changed although it is not part of it.
        ring = dilate_mask(region, band) & ~dilate_mask(region, 1)
        if ring.any():
            moved = np.abs(after_g[ring] - before_g[ring]).mean()
            s = _ramp(float(moved), 6.0, 25.0)
            pq.append(s)
            if s < 7:
                negative.append(
                    Feedback(f"a halo: the ring around the edit moved {moved:.0f} grey levels", "next_params")
                )
        # Clipping the edit introduced.
        clip = _clipped(e.result, region) - _clipped(e.start, region)
        s = _ramp(clip, 0.05, 0.3)
        pq.append(s)
        if s < 7:
            negative.append(Feedback(f"{clip:.0%} of the edit is clipped to black or white", "next_params"))
        if not negative:
            positive.append("no seam, smear, halo, noise or clipping found")
        scores = {"perceptual_quality": round(min(pq), 2), "aesthetics": round(min(aes), 2) if aes else None}
        return ExpertJudgement(self.name, "offline", scores, tuple(positive), tuple(negative))

    def _global(self, e: Evidence) -> ExpertJudgement:
        """A whole-image edit: judged against the image before it (blur, noise, clipping it introduced)."""
        after_g, before_g = _grey(e.result), _grey(e.start)
        positive: list[str] = []
        negative: list[Feedback] = []
        lap_a, lap_b = float(_laplacian(after_g).mean()), float(_laplacian(before_g).mean())
        pq: list[float] = []
        aes: list[float] = []
        whole = np.ones(after_g.shape, bool)
        clip = _clipped(e.result, whole) - _clipped(e.start, whole)
        s = _ramp(clip, 0.05, 0.3)
        pq.append(s)
        if s < 7:
            negative.append(Feedback(f"{clip:.0%} of the image became clipped", "next_params"))
        if lap_b > 1.0 and e.subtask.kind not in ("image_deblurring",):
            ratio = lap_a / lap_b
            # Contrast changes scale the Laplacian too: only a drop beyond what the contrast explains counts.
            contrast = max(float(after_g.std()) / max(float(before_g.std()), 1e-3), 1e-3)
            rel = ratio / contrast
            s = _ramp(rel, 0.7, 0.3)
            aes.append(s)
            if s < 7:
                negative.append(Feedback(f"the image lost detail ({rel:.2f}× its sharpness)", "other_path"))
            s = _ramp(rel, 2.5, 5.0)
            pq.append(s)
            if s < 7:
                negative.append(Feedback(f"the image became noisier ({rel:.1f}× its detail energy)", "next_params"))
        if not negative:
            positive.append("no blur, noise or clipping introduced")
        scores = {"perceptual_quality": round(min(pq), 2), "aesthetics": round(min(aes), 2) if aes else None}
        return ExpertJudgement(self.name, "offline", scores, tuple(positive), tuple(negative))

    def _resized(self, e: Evidence) -> ExpertJudgement:
        """Outpainting and upscaling: mirrored margins (outpainting), and detail kept (upscaling)."""
        h0, w0 = e.start.shape[:2]
        h1, w1 = e.result.shape[:2]
        if e.subtask.kind == "outpainting" and (h1, w1) != (h0, w0):
            score, why = _mirror_score(e.start, e.result)
            if score is None:
                return ExpertJudgement(self.name, "offline", {}, (why,))
            pos = (why,) if score >= 7 else ()
            neg = () if score >= 7 else (Feedback(why, "other_path"),)
            return ExpertJudgement(self.name, "offline", {"perceptual_quality": score}, pos, neg)
        return ExpertJudgement(self.name, "offline", {}, ("resized: judged by the subtask's check only",))


def _mirror_score(before: np.ndarray, after: np.ndarray) -> tuple[float | None, str]:
    """Whether the new margins of an outpainted canvas are mirror copies of the strip next to them."""
    h0, w0 = before.shape[:2]
    h1, w1 = after.shape[:2]
    found = None
    for top in range(0, h1 - h0 + 1):
        for left in (0, w1 - w0, (w1 - w0) // 2):
            if 0 <= left <= w1 - w0 and np.array_equal(after[top : top + h0, left : left + w0], before):
                found = (top, left)
                break
        if found:
            break
    if found is None:
        return None, "the original could not be located in the new canvas"
    top, left = found
    sims: list[float] = []
    margins = [
        (after[:, :left], after[:, left : 2 * left][:, ::-1]) if left else None,
        (after[:, left + w0 :], after[:, left + w0 - (w1 - w0 - left) : left + w0][:, ::-1])
        if w1 - w0 - left
        else None,
        (after[:top], after[top : 2 * top][::-1]) if top else None,
        (after[top + h0 :], after[top + h0 - (h1 - h0 - top) : top + h0][::-1]) if h1 - h0 - top else None,
    ]
    for pair in margins:
        if pair is None or pair[0].size == 0 or pair[0].shape != pair[1].shape or min(pair[0].shape[:2]) < 3:
            continue
        # High-pass content only: a smooth gradient continued and a gradient mirrored look alike, a copied
        # texture or a mirrored letter does not.
        a = _laplacian(_grey(np.ascontiguousarray(pair[0]))).ravel()
        b = _laplacian(_grey(np.ascontiguousarray(pair[1]))).ravel()
        if a.std() < 2.0 or b.std() < 2.0:
            continue
        sims.append(float(np.corrcoef(a, b)[0, 1]))
    if not sims:
        return 10.0, "the new margins hold no detail that could be a mirrored copy"
    worst = max(sims)
    return _ramp(worst, 0.6, 0.95), f"new margins correlate {worst:.2f} with a mirror of the original"


def offline_experts(protocol: Protocol) -> tuple[Any, ...]:
    """The offline experts the table lists, in its order."""
    known = {"instruction": InstructionExpert, "preservation": PreservationExpert, "perception": PerceptionExpert}
    out = []
    for spec in protocol.offline:
        if spec.name not in known:
            raise TableError(f"reflection.yaml names an unknown offline expert {spec.name!r}; known: {sorted(known)}")
        out.append(known[spec.name](protocol))
    return tuple(out)
