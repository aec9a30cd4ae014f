"""Every protocol's table validator names a row that is not an object, and the fields a row needs
(one reader of records, table_files.records_frame), instead of a pandas error."""
from __future__ import annotations

import pytest

from parlai_acute.errors import UserError
from parlai_acute.registry import protocol


@pytest.mark.parametrize("name,row", [("per-turn", "turn row"), ("ssa", "label row"), ("convai2", "rating row"),
                                      ("multiref", "reference row")])
def test_a_row_that_is_not_an_object_is_named(name, row):
    p = protocol(name)
    from_records, required = p.get("from_records"), p.get("required")
    with pytest.raises(UserError, match=rf"^row 2: a {row} must be an object with the fields "
                                        rf"{', '.join(required)}$"):
        from_records([{}, "not an object"])
    with pytest.raises(UserError, match=r"^line 7: a "):
        from_records([{}, ["a", "list"]], where=["line 3", "line 7"])
