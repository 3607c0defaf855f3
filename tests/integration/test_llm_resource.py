"""LLMResource backend selection and configuration errors (no model, no server needed).

The engines themselves are exercised for real in tests/core/test_engines_*.py."""

from __future__ import annotations

import pytest

from rag_assets.core.engines.openai_engine import OpenAIEngine, OpenAIEngineError
from resources.llm import API_KEY_ENV, BACKENDS, BaseModelResource, LLMResource

SECRET = "sk-resource-test-4c1d-not-real"


def test_backends() -> None:
    assert BACKENDS == ("transformers", "vllm", "openai")
    assert LLMResource(base_model=BaseModelResource()).backend == "transformers"
    with pytest.raises(ValueError, match="llamacpp"):  # the config itself refuses an unknown backend
        LLMResource(base_model=BaseModelResource(), backend="llamacpp")


def test_openai_backend_needs_url_and_model() -> None:
    with pytest.raises(ValueError, match="openai_base_url"):
        LLMResource(base_model=BaseModelResource(), backend="openai", openai_model="m").engine()
    with pytest.raises(ValueError, match="http"):
        OpenAIEngine("m", "127.0.0.1:8000/v1")


def test_openai_key_comes_from_the_environment_and_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, SECRET)
    resource = LLMResource(
        base_model=BaseModelResource(),
        backend="openai",
        openai_base_url="http://127.0.0.1:9/v1",
        openai_model="env-model",
    )
    engine = resource.engine(adapters={"router": "adapters/abc"})
    assert isinstance(engine, OpenAIEngine) and engine.adapters == ["router"]
    assert resource.engine() is engine  # one engine per resource, until it is closed
    resource.close()
    assert resource.engine() is not engine
    with pytest.raises(OpenAIEngineError, match="unreachable") as failed:
        engine.generate([[{"role": "user", "content": "hi"}]] * 2, adapter="router", max_new_tokens=2)
    for text in (repr(resource), str(resource), repr(engine), str(failed.value)):
        assert SECRET not in text
    explicit = LLMResource(
        base_model=BaseModelResource(),
        backend="openai",
        openai_base_url="http://127.0.0.1:9/v1",
        openai_model="m",
        openai_api_key=SECRET,
    )
    assert SECRET not in repr(explicit) and SECRET not in repr(explicit.engine())


def test_token_estimate_without_a_tokenizer() -> None:
    engine = OpenAIEngine("m", "http://127.0.0.1:9/v1")
    assert engine.count_tokens("") == 0
    assert engine.count_tokens("one two three") == 4  # ceil(13 / 4), not below the 3 words
    assert engine.count_tokens("a b c d e f") == 6


def test_environment_variables_switch_the_default_models(monkeypatch) -> None:
    from resources.llm import LLMResource

    monkeypatch.setenv("RAG_LLM_BACKEND", "openai")
    monkeypatch.setenv("RAG_BASE_MODEL", "/models/bigger")
    monkeypatch.setenv("RAG_OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("RAG_OPENAI_MODEL", "served")
    from resources.project import project_resources

    resources = project_resources()
    resource = resources["llm"]
    assert (resource.backend, resource.base_model.model_path, resource.openai_base_url, resource.openai_model) == (
        "openai",
        "/models/bigger",
        "http://127.0.0.1:8000/v1",
        "served",
    )
    assert resource.base_model is resources["base_model"]  # composed: one base-model resource, not two
    monkeypatch.delenv("RAG_LLM_BACKEND")
    assert LLMResource.from_env().backend == "transformers"
    monkeypatch.setenv("RAG_LLM_BACKEND", "llamacpp")
    with pytest.raises(ValueError, match="RAG_LLM_BACKEND='llamacpp' is not one of"):
        LLMResource.from_env()
