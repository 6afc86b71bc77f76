"""Elementwise-heavy backward: (tanh(x) * sigmoid(x) + relu(x)).sum() from 1e4 to 1e7 elements
(1e8 on a GPU), forward + backward."""
import pytest


@pytest.mark.cases("elementwise")
def test_elementwise_backward(run_case, case, impl):
    run_case(case, impl)
