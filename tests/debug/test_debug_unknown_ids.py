"""Unknown step ids get suggestions that follow the graph's shape, whatever its step count."""

from graphlab.debug.steps import unknown_id


def test_suggestions_come_from_id_shapes_not_every_step():
    known = [f"substep[{k}]/{name}" for k in range(100_000) for name in ("p2g", "g2p")]
    err = unknown_id("substep[3]/p2x", known, "step")
    assert "'substep[0]/p2g'" in str(err)
    assert str(err).count("substep[") <= 6  # the target and at most five shapes


def test_a_huge_unknown_id_gives_a_short_message():
    err = unknown_id("x" * 5_000_000, ["init", "substep[0]/p2g"], "step")
    assert len(str(err)) < 300
