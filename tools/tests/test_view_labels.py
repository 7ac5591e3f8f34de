"""The viewer labels run facts the way a reader wants them, not as Python reprs."""

from __future__ import annotations

from research_engine.view import model_label as _model_label


def test_model_label_shows_the_name_and_other_facts():
    assert _model_label({"name": "extractive", "kind": "extractive"}) == "extractive"
    model = {"name": "openai:qwen", "kind": "openai", "base_url": "http://127.0.0.1:8080/v1"}
    assert _model_label(model) == "openai:qwen (base_url http://127.0.0.1:8080/v1)"


def test_model_label_when_none_was_recorded():
    assert _model_label(None) == "none recorded"
    assert _model_label({}) == "none recorded"
