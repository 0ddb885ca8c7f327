import numpy as np

from twinbench.metrics.permutation import flip_rate


def test_flip_rate_by_hand() -> None:
    # item 0: abstains under order 0, answers under order 1 -> flipped
    # item 1: abstains under both orders                     -> stable
    # item 2: one valid order only                           -> not counted
    group = np.array([0, 0, 1, 1, 2])
    abstain = np.array([True, False, True, True, False])
    assert flip_rate(group, abstain) == (1, 2)
