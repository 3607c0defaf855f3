"""OpenAIEngine for real against a real `vllm serve` (the OpenAI-compatible server) started on
127.0.0.1 with the converted SmolLM2 and a LoRA module, torn down after the module."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag_assets.core.engines.openai_engine import OpenAIEngine, OpenAIEngineError
from rag_assets.core.routing.action_format import ACTION_REGEX

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vLLM is not installed (pip install '.[vllm]'; `make install` does it)",
    ),
]

API_KEY = "sk-test-7f3a9c1e-not-a-real-key"
SERVED = "smollm2"
STARTUP_TIMEOUT_S = 900  # vLLM on 2 busy CPU cores: 2-4 minutes seen
CHATS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Name a colour of the sky."}],
    [{"role": "user", "content": "Say hello."}],
    [{"role": "user", "content": "What is 2 plus 2?"}],
]
ROUTER_CHAT = [
    {"role": "system", "content": "Reply with `[ANSWER] id: first words` lines or `Cannot answer`."},
    {
        "role": "user",
        "content": "Question: how hot for green tea?\n1: Kettle manual\n  2: Boiling\n    3: green tea 80 C",
    },
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def server(smollm2_checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`vllm serve` as a subprocess; yields its base URL (…/v1)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    folder = tmp_path_factory.mktemp("serve")
    adapter = folder / "router-lora"
    torch.manual_seed(0)
    get_peft_model(
        AutoModelForCausalLM.from_pretrained(smollm2_checkpoint),
        LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], init_lora_weights=False),
    ).save_pretrained(adapter)
    port = _free_port()
    log = (folder / "vllm-serve.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(smollm2_checkpoint),
            "--served-model-name",
            SERVED,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--api-key",
            API_KEY,
            "--dtype",
            "float32",
            "--max-model-len",
            "2048",
            "--gpu-memory-utilization",
            "0.3",
            "--enable-lora",
            "--max-lora-rank",
            "8",
            "--lora-modules",
            f"router={adapter}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _healthy(url):
            if process.poll() is not None:
                pytest.fail(
                    f"vllm serve exited with {process.returncode}:\n" + (folder / "vllm-serve.log").read_text()[-4000:]
                )
            if time.monotonic() > deadline:
                pytest.fail(
                    f"vllm serve not healthy after {STARTUP_TIMEOUT_S} s:\n"
                    + (folder / "vllm-serve.log").read_text()[-4000:]
                )
            time.sleep(2)
        yield f"{url}/v1"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # its own session: the engine-core children go too
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def engine(server: str, smollm2_checkpoint: Path) -> OpenAIEngine:
    return OpenAIEngine(
        SERVED, server, API_KEY, supports_regex=True, tokenizer_path=smollm2_checkpoint, adapters={"router": None}
    )


def test_a_batch_is_sent_concurrently_with_usage_token_counts(engine: OpenAIEngine) -> None:
    batch = engine.generate(CHATS, max_new_tokens=8)
    assert len(batch) == 4 and all(g.text and 0 < g.output_tokens <= 8 for g in batch)
    assert "Paris" in batch[0].text
    for chat, generation in zip(CHATS, batch):  # usage.prompt_tokens = the chat-templated prompt
        prompt = engine._tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        assert generation.prompt_tokens == engine.count_tokens(prompt)
    alone = [engine.generate([chat], max_new_tokens=8)[0].text for chat in CHATS]
    assert alone == [g.text for g in batch]  # order kept, greedy


def test_an_adapter_is_the_served_lora_module(engine: OpenAIEngine) -> None:
    base = engine.generate(CHATS, max_new_tokens=8)
    routed = engine.generate(CHATS, adapter="router", max_new_tokens=8)
    assert len(routed) == 4 and all(g.output_tokens > 0 for g in routed)
    assert [g.text for g in routed] != [g.text for g in base]  # the random LoRA changes greedy output
    with pytest.raises(KeyError, match="not registered"):
        engine.generate(CHATS[:1], adapter="missing")
    unserved = OpenAIEngine(SERVED, engine.base_url, API_KEY, adapters={"ghost": None})
    with pytest.raises(OpenAIEngineError, match="HTTP 404"):
        unserved.generate(CHATS[:1], adapter="ghost", max_new_tokens=4)


def test_regex_goes_to_vllm_structured_outputs(engine: OpenAIEngine) -> None:
    for adapter in (None, "router"):
        for generation in engine.generate(
            [ROUTER_CHAT, CHATS[0]], adapter=adapter, max_new_tokens=48, regex=ACTION_REGEX
        ):
            text = generation.text
            complete = re.fullmatch(ACTION_REGEX, text) or re.fullmatch(ACTION_REGEX, text + "\n")
            prefix = generation.output_tokens >= 48 and all(
                re.fullmatch(ACTION_REGEX, line + "\n") for line in text.split("\n")[:-1]
            )
            assert complete or prefix, generation
    grammars = [r"\[ANSWER\] 3: green tea 80 C|Cannot answer", r"(yes|no)"]  # one per chat, as the router sends
    out = engine.generate([ROUTER_CHAT, CHATS[0]], max_new_tokens=16, regex=grammars)
    assert all(re.fullmatch(g, o.text) for g, o in zip(grammars, out)), [o.text for o in out]


def test_the_api_key_never_shows(engine: OpenAIEngine, server: str) -> None:
    assert API_KEY not in repr(engine) and API_KEY not in str(vars(engine).get("base_url"))
    wrong_key = API_KEY[::-1]
    rejected = OpenAIEngine(SERVED, server, wrong_key)
    assert wrong_key not in repr(rejected)
    with pytest.raises(OpenAIEngineError, match="HTTP 401") as refused:
        rejected.generate(CHATS[:1], max_new_tokens=4)
    assert wrong_key not in str(refused.value) and API_KEY not in str(refused.value)
    unreachable = OpenAIEngine(SERVED, f"http://127.0.0.1:{_free_port()}/v1", API_KEY, timeout_s=5)
    with pytest.raises(OpenAIEngineError, match="unreachable") as failed:
        unreachable.generate(CHATS[:2], max_new_tokens=4)
    assert API_KEY not in str(failed.value) and API_KEY not in repr(failed.value)


def test_the_llm_resource_drives_the_served_model(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from resources.llm import API_KEY_ENV, BaseModelResource, LLMResource

    monkeypatch.setenv(API_KEY_ENV, API_KEY)  # as with openai_api_key=dg.EnvVar("RAG_OPENAI_API_KEY")
    resource = LLMResource(
        base_model=BaseModelResource(),
        backend="openai",
        openai_base_url=server,
        openai_model=SERVED,
        openai_supports_regex=True,
    )
    engine = resource.engine(adapters={"router": Path("served-by-the-server")})
    out = engine.generate([ROUTER_CHAT, CHATS[0]], adapter="router", max_new_tokens=48, regex=ACTION_REGEX)
    assert len(out) == 2 and all(g.output_tokens > 0 and g.prompt_tokens > 5 for g in out)
    assert API_KEY not in repr(resource) and API_KEY not in repr(engine)
