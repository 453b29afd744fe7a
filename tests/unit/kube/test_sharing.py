"""The bounded table of shared values."""

from __future__ import annotations

from pyocm.kube.sharing import SharedValues


def _fresh(text: str) -> str:
    return "".join(list(text))


def test_equal_keys_get_one_value_made_once() -> None:
    made: list[str] = []

    def make(key: str) -> str:
        made.append(key)
        return key

    table = SharedValues(make, limit=10)
    first = table.get(_fresh("ManagedClusterConditionAvailable"))
    again = table.get(_fresh("ManagedClusterConditionAvailable"))
    assert first is again and made == ["ManagedClusterConditionAvailable"]


def test_a_full_table_starts_again() -> None:
    table = SharedValues(lambda key: key, limit=3)
    for i in range(10):
        table.get(f"value-{i}")
        assert len(table) <= 3
    assert "value-9" in table and "value-0" not in table
