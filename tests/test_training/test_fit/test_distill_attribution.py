"""Distilling a teacher's probabilities into the attribution model: ``--init-from`` starts from
a trained folder, ``--teacher`` pulls the student toward the teacher's soft labels."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import EVIDENCE

from training.data.nli import NLISplits, ids_digest, load_nli_sets

PAIRS = [(EVIDENCE, "The tower was completed in 1889."), (EVIDENCE, "The tower is in Rome.")]


def _cfg(tiny_base, out, **kw):
    from training.fit.attribution import TrainAttributionConfig

    settings = dict(max_length=64, batch_size=4, max_steps=4, eval_every=2, wiki_articles=0)
    settings |= dict(progress=False, device="cpu", freeze_embeddings=True) | kw
    return TrainAttributionConfig(out=str(out), base=str(tiny_base), **settings)


def _scores(out) -> np.ndarray:
    from editor.attribution import HFSequenceClassificationNLI

    model = HFSequenceClassificationNLI(str(out), max_length=64)
    return np.array(
        [[s.supported, s.contradicted, s.not_supported] for s in model.score_batch(PAIRS)]
    )


@pytest.fixture
def splits(data_dir) -> NLISplits:
    rows = [r for rows in load_nli_sets(data_dir, max_length=64).values() for r in rows]
    return NLISplits(rows[::2][:24], rows[1::2][:8])


def test_a_student_starts_from_its_init_and_moves_toward_the_teacher(tiny_base, splits, tmp_path):
    from training.fit.attribution import train_attribution

    start = train_attribution(_cfg(tiny_base, tmp_path / "start"), splits).out
    before = _scores(start)
    still = train_attribution(
        _cfg(tiny_base, tmp_path / "still", init_from=str(start), lr=1e-12, max_steps=2), splits
    ).out
    np.testing.assert_allclose(_scores(still), before, atol=1e-3)  # it began where start ended

    teacher = np.tile([0.02, 0.02, 0.96], (len(splits.train), 1))  # "never supported"
    np.savez(tmp_path / "probs.npz", train=teacher.astype(np.float16))
    student = train_attribution(
        _cfg(
            tiny_base,
            tmp_path / "student",
            init_from=str(start),
            teacher=str(tmp_path / "probs.npz"),
            distill=1.0,
            lr=3e-3,
            max_steps=12,
            eval_every=12,
        ),
        splits,
    ).out
    assert _scores(student)[:, 2].mean() > before[:, 2].mean() + 0.1


def test_a_teacher_of_other_rows_is_refused_with_the_fix(tiny_base, splits, tmp_path):
    from training.fit.attribution import train_attribution

    np.savez(tmp_path / "probs.npz", train=np.full((5, 3), 1 / 3, np.float16))
    cfg = _cfg(tiny_base, tmp_path / "x", teacher=str(tmp_path / "probs.npz"))
    with pytest.raises(ValueError, match="--splits"):
        train_attribution(cfg, splits)


def test_a_teacher_of_as_many_but_other_rows_is_refused_by_their_ids(tiny_base, splits, tmp_path):
    from training.fit.attribution import teacher_targets

    n = len(splits.train)
    probs = np.full((n, 3), 1 / 3, np.float16)
    np.savez(tmp_path / "other.npz", train=probs, train_ids_sha256=np.array("0" * 64))
    with pytest.raises(ValueError, match="ids differ"):
        teacher_targets(str(tmp_path / "other.npz"), splits.train)
    digest = ids_digest(splits.train)
    np.savez(tmp_path / "same.npz", train=probs, train_ids_sha256=np.array(digest))
    assert len(teacher_targets(str(tmp_path / "same.npz"), splits.train)) == n
