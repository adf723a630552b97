"""Dynamic batching across threads for an ONNX session (Triton's dynamic batcher, in process).

Concurrent requests in ``purr serve`` each call the same models (the query encoder, the
reranker, the verifier, the span judge and the reader). Without a batcher each call runs on its
own, so two requests' calls fight over the cores. :class:`BatchedSession` stands in for an
``onnxruntime.InferenceSession``: a call that finds the model idle runs at once (after waiting
up to ``wait_ms`` for company); calls that arrive while it runs queue, and the next run takes
every queued call at once, up to ``max_batch`` rows. The inputs are right-padded to the widest
call (pad id 0, attention mask 0), joined along the batch axis, run once and split back; an
output whose second axis is the sequence (per-token outputs) is cut back to each call's own
width. Calls are joined only where the padding this adds stays within ``slack`` of the rows'
own tokens, so a short call never pays for a long one.

The answers are the model's on each call's rows: masked padding changes nothing in fp32 graphs
(to float rounding), and int8 graphs quantise activations per batch, so their scores move a
little, as with any change of batch (the reranker's within 0.05 of relevance, tested).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

PAD = {"input_ids": 0, "attention_mask": 0, "token_type_ids": 0}


@dataclass(frozen=True)
class BatchPolicy:
    """How calls are joined: ``wait_ms`` a lone call waits for company, ``max_batch`` rows a
    run takes at most, ``slack`` the padding allowed as a share of the rows' own tokens."""

    wait_ms: float = 0.0
    max_batch: int = 32
    slack: float = 0.25

    def __post_init__(self) -> None:
        if self.wait_ms < 0 or self.max_batch < 1 or self.slack < 0:
            raise ValueError(
                f"batching needs wait_ms >= 0, max_batch >= 1 and slack >= 0; got {self}"
            )


@dataclass(eq=False)
class _Call:
    names: tuple[str, ...] | None
    feed: dict[str, np.ndarray]
    rows: int
    width: int
    done: threading.Event = field(default_factory=threading.Event)
    result: list[np.ndarray] | None = None
    error: BaseException | None = None


def fits(batch: list[tuple[int, int]], rows: int, width: int, slack: float) -> bool:
    """Whether a call of ``rows`` x ``width`` joins ``batch`` ((rows, width) each) within
    ``slack``: padded cells <= (1 + slack) x the calls' own cells.

    >>> fits([(8, 100)], 8, 110, 0.25), fits([(8, 30)], 8, 200, 0.25)
    (True, False)
    """
    calls = [*batch, (rows, width)]
    own = sum(r * w for r, w in calls)
    return sum(r for r, _ in calls) * max(w for _, w in calls) <= (1 + slack) * own


def join(feeds: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The feeds right-padded to the widest and stacked along the batch axis.

    >>> j = join([{"input_ids": np.ones((1, 2), np.int64)}, {"input_ids": np.ones((2, 3), np.int64)}])
    >>> j["input_ids"].tolist()
    [[1, 1, 0], [1, 1, 1], [1, 1, 1]]
    """
    out = {}
    for name in feeds[0]:
        arrays = [f[name] for f in feeds]
        if arrays[0].ndim < 2:
            out[name] = np.concatenate(arrays)
            continue
        width = max(a.shape[1] for a in arrays)
        padded = [
            np.pad(
                a,
                [(0, 0), (0, width - a.shape[1])] + [(0, 0)] * (a.ndim - 2),
                constant_values=PAD.get(name, 0),
            )
            for a in arrays
        ]
        out[name] = np.concatenate(padded)
    return out


class BatchedSession:
    """An ``InferenceSession`` whose ``run`` joins concurrent calls (see the module doc)."""

    def __init__(self, session: Any, policy: BatchPolicy) -> None:
        self.session = session
        self.policy = policy
        self._per_token = [
            len(o.shape) > 1 and isinstance(o.shape[1], str) for o in session.get_outputs()
        ]
        self._names = [o.name for o in session.get_outputs()]
        self._lock = threading.Condition()
        self._queue: list[_Call] = []
        self._busy = False
        self.runs = 0  # model runs, and calls served: their ratio is the mean calls per run
        self.calls = 0

    def __getattr__(self, name: str) -> Any:  # get_inputs, get_outputs, ... of the session
        return getattr(self.session, name)

    def run(self, output_names: Any, feed: dict[str, Any], run_options: Any = None) -> list:
        arrays = {k: np.asarray(v) for k, v in feed.items()}
        first = next(iter(arrays.values()))
        if run_options is not None or first.ndim < 2 or not first.shape[0]:
            return self.session.run(output_names, feed, run_options)
        names = tuple(output_names) if output_names else None
        call = _Call(names, arrays, int(first.shape[0]), int(first.shape[1]))
        with self._lock:
            self._queue.append(call)
            if self._busy:  # a run is going: the leader after it takes this call
                while not call.done.is_set() and self._busy:
                    self._lock.wait()
                if call.done.is_set():
                    return self._answer(call)
            self._busy = True
            if self.policy.wait_ms > 0 and len(self._queue) == 1:
                self._lock.wait(self.policy.wait_ms / 1000)
        try:
            while not call.done.is_set():
                self._run_next()
        finally:
            with self._lock:
                self._busy = False
                self._lock.notify_all()
        return self._answer(call)

    def _answer(self, call: _Call) -> list:
        if call.error is not None:
            raise call.error
        assert call.result is not None
        return call.result

    def _take(self) -> list[_Call]:
        """The first queued call and every later one that fits with it (names, rows, padding)."""
        with self._lock:
            head = self._queue[0]
            batch, shapes = [head], [(head.rows, head.width)]
            for c in self._queue[1:]:
                if c.names != head.names or c.feed.keys() != head.feed.keys():
                    continue
                if sum(r for r, _ in shapes) + c.rows > self.policy.max_batch:
                    continue
                if fits(shapes, c.rows, c.width, self.policy.slack):
                    batch.append(c)
                    shapes.append((c.rows, c.width))
            self._queue = [c for c in self._queue if c not in batch]
            return batch

    def _run_next(self) -> None:
        batch = self._take()
        try:
            if len(batch) == 1:
                c = batch[0]
                c.result = list(self.session.run(list(c.names) if c.names else None, c.feed))
            else:
                self._run_joined(batch)
        except BaseException as e:  # noqa: BLE001 - handed to the callers
            if len(batch) == 1:
                batch[0].error = e
            else:  # one call's fault must not fail the others: each alone
                for c in batch:
                    try:
                        c.result = list(
                            self.session.run(list(c.names) if c.names else None, c.feed)
                        )
                    except BaseException as err:  # noqa: BLE001
                        c.error = err
        self.runs += 1
        self.calls += len(batch)
        with self._lock:
            for c in batch:
                c.done.set()
            self._lock.notify_all()

    def _run_joined(self, batch: list[_Call]) -> None:
        names = batch[0].names
        outs = self.session.run(list(names) if names else None, join([c.feed for c in batch]))
        per_token = (
            [self._per_token[self._names.index(n)] for n in names] if names else self._per_token
        )
        start = 0
        for c in batch:
            c.result = [
                o[start : start + c.rows, : c.width] if tok else o[start : start + c.rows]
                for o, tok in zip(outs, per_token, strict=True)
            ]
            start += c.rows
