import json

import pytest
from pydantic import ValidationError

from conftest import EXAMPLES, read_rows
from twinbench.records import SCHEMAS, Item, Response


def test_items_round_trip_exactly() -> None:
    for row in read_rows(EXAMPLES / "items.jsonl"):
        item = Item.model_validate(row)
        again = item.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert again == row


def test_every_schema_exports() -> None:
    for name, model in SCHEMAS.items():
        schema = model.model_json_schema(by_alias=True)
        assert schema["type"] == "object", name
    item_schema = SCHEMAS["item"].model_json_schema(by_alias=True)
    assert "schema" in item_schema["properties"]
    assert json.dumps(item_schema)  # serialisable


def test_failure_statuses_are_never_abstentions() -> None:
    with pytest.raises(ValidationError, match="never an abstention"):
        Response.model_validate({"item_id": "a", "system": "s", "status": "error", "abstain": True})
    ok = Response.model_validate({"item_id": "a", "system": "s", "status": "error"})
    assert ok.abstain is None


def test_ok_response_needs_decision() -> None:
    with pytest.raises(ValidationError):
        Response.model_validate({"item_id": "a", "system": "s", "status": "ok"})
    with pytest.raises(ValidationError):
        Response.model_validate({"item_id": "a", "system": "s", "status": "ok", "abstain": False})
