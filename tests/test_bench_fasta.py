"""FaSTA* benchmark protocol: the streams it compares on are disjoint, and the small run learns."""

from __future__ import annotations

import pytest

from bench.fasta import RecordingSampler, StreamOverlapError, _digest, check_disjoint, stream_sizes
from costa.subroutines.runtime import INDUCE_EVERY
from costa.synthetic.fasta_tasks import make_fasta_tasks


def test_small_run_trains_through_several_inductions_and_evaluates_after_each() -> None:
    n_train, n_eval, checkpoints = stream_sizes(small=True, train=None, evaluate=None)
    assert (n_train, n_eval) == (60, 12)
    # With 30 tasks the one induction (task 20) saw too few subtasks per path to propose anything.
    assert n_train // INDUCE_EVERY >= 3
    assert checkpoints == (20, 40, 60) and all(c % INDUCE_EVERY == 0 for c in checkpoints)
    assert stream_sizes(small=False, train=None, evaluate=None) == (200, 100, (40, 80, 120, 160, 200))
    assert stream_sizes(small=True, train=50, evaluate=5) == (50, 5, (20, 40))
    with pytest.raises(ValueError, match="at least one training"):
        stream_sizes(small=True, train=0, evaluate=5)


def test_evaluation_images_are_neither_training_images_nor_verification_samples() -> None:
    train, evaluation = make_fasta_tasks(60, 0, "train"), make_fasta_tasks(12, 0, "eval")
    sampler = RecordingSampler()
    drawn = sampler("object_removal", 5, 0, 20 * 40) + sampler("text_removal", 4, 0, 20 * 40)
    assert len(drawn) == 9 and len(sampler.digests) == 9  # each sample image remembered
    line = check_disjoint(evaluation, train, sampler.digests)
    assert line.startswith("streams disjoint: 12 evaluation images") and "9 verification samples" in line
    # The check fails when the streams do meet: an evaluation task trained on, or drawn as a sample.
    with pytest.raises(StreamOverlapError, match="1 evaluation images are training images"):
        check_disjoint(evaluation, [*train, evaluation[3]], sampler.digests)
    leaked = RecordingSampler()
    leaked.digests = set(sampler.digests)
    leaked.digests.add(_digest(evaluation[0].image))
    with pytest.raises(StreamOverlapError, match="1 are verification samples"):
        check_disjoint(evaluation, train, leaked.digests)
