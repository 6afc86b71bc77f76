"""One SGD step (zero_grad, forward, cross-entropy, backward, update) of an MLP:
784-256-256-10 at batch 64, 1024-1024-1024-10 at batch 1024, and a width sweep."""
import pytest


@pytest.mark.cases("mlp")
def test_mlp_step(run_case, case, impl):
    run_case(case, impl)
