import numpy as np

from twinbench.metrics.abstention import abstention_precision, abstention_recall, twin_accuracy

T, F = True, False


def test_recall_precision_by_hand() -> None:
    # 4 unanswerable rows of family f, 2 abstained on with code f  -> recall 2/4.
    # 3 rows in all claim code f (one of them a twin)               -> precision 2/3.
    unanswerable = np.array([T, T, T, T, F, F])
    correct = np.array([T, T, F, F, F, F])
    claimed = np.array([T, T, F, F, T, F])
    assert abstention_recall(correct, unanswerable) == 0.5
    assert abstention_precision(correct & unanswerable, claimed) == 2 / 3


def test_twin_accuracy_and_empty_denominators() -> None:
    assert twin_accuracy(np.array([T, F, T]), np.array([T, T, F])) == 0.5
    assert abstention_recall(np.array([F]), np.array([F])) is None
