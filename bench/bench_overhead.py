"""Per-op overhead: a 100-op elementwise chain on 16 elements, forward + backward."""
import pytest


@pytest.mark.cases("overhead")
def test_chain100(run_case, case, impl):
    run_case(case, impl)
