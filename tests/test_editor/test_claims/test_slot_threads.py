"""The slot checker's parse cache under the service's threads: two threads, a cache of one doc
(every parse evicts another), no error and every doc the one asked for."""

from __future__ import annotations

import sys
import threading

from editor.claims.slot_check import SlotChecker


def test_two_threads_share_a_checker_whose_cache_evicts_on_every_parse():
    checker = SlotChecker(cache_size=1)
    texts = [[f"Ship {k} was launched in {1900 + k}." for k in range(j, j + 6)] for j in (0, 50)]
    errors: list[BaseException] = []

    def work(mine: list[str]) -> None:
        try:
            for _ in range(150):
                docs = checker._parse_many(mine)
                assert [d.text for d in docs] == mine
                verdict = checker.check(mine[0], "Ship 0 was launched in 1901.")
                assert verdict is not None
        except BaseException as e:  # noqa: BLE001 - any error fails the test below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in texts]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    assert len(checker._docs) <= 1
