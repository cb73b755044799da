"""Fixtures the widget tests share; a test module's own ``graph`` fixture overrides this one."""

import pytest
from editor_demo import demo_graph


@pytest.fixture
def graph(ti_cpu):
    """The demo graph of :mod:`editor_demo` on x64."""
    return demo_graph()
