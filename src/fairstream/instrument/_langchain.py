"""LangChain: an async callback handler, and ``instrument(llm)`` that attaches it.

``instrument`` returns a copy of the model *of its own class* with the handler in its
``callbacks``, so ``astream``, ``ainvoke``, ``bind_tools``, ``with_structured_output`` and
``with_config`` behave exactly as before and the result is still a ``BaseChatModel``.

Rule 1: the handler runs inline (no task per event) and does constant work per chunk.
Rule 2: chunk times come from the wire when the model talks through the openai SDK
        (``ChatOpenAI`` and kin): the copy's ``async_client`` is a thin proxy that stamps
        each SDK chunk's bytes on arrival and hands the stamp to the run's trace. Other
        models are stamped when LangChain reports the chunk. A repeated report of the
        same chunk object, and LangChain's synthetic closing chunk, are ignored.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any
from uuid import UUID

from .._builder import TraceBuilder
from .._errors import require
from .._recorder import Recorder
from ._stamp import stamp_response

try:
    from langchain_core.callbacks import AsyncCallbackHandler
    from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult
except ImportError:  # pragma: no cover - exercised only without the extra
    require("langchain-core", "langchain")

__all__ = ["FairstreamCallbackHandler", "instrument_langchain"]

# The stamp slot of the run being started in this task: [arrival of the latest SDK chunk].
# Set by the handler (called inline by the model's astream), read by the client proxy.
_RUN_SLOT: ContextVar[list[float | None] | None] = ContextVar("fairstream_lc_slot", default=None)


class FairstreamCallbackHandler(AsyncCallbackHandler):
    """Records a trace per chat-model run; attach it through ``callbacks=[...]``."""

    run_inline = True  # called directly: no task or thread per event

    def __init__(
        self,
        recorder: Recorder,
        *,
        label: str | None = None,
        base_url: str | None = None,
    ) -> None:
        self.recorder = recorder
        self.label = label
        self.base_url = base_url
        # run id -> (builder, [last chunk object], [wire arrival of the current chunk])
        self._runs: dict[UUID, tuple[TraceBuilder, list[Any], list[float | None]]] = {}

    async def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        params = invocation_params or kwargs.get("invocation_params") or {}
        meta = metadata or {}
        max_tokens = params.get("max_completion_tokens", params.get("max_tokens"))
        builder = self.recorder.start(
            client="langchain",
            model=params.get("model") or params.get("model_name"),
            base_url=self.base_url,
            max_tokens=max_tokens if isinstance(max_tokens, int) else None,
            label=meta.get("fairstream_label", self.label),
            request_id=None if meta.get("fairstream_id") is None else str(meta["fairstream_id"]),
        )
        builder.mark_sent()
        slot: list[float | None] = [None]
        self._runs[run_id] = (builder, [None], slot)
        _RUN_SLOT.set(slot)

    async def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        entry = self._runs.get(run_id)
        if entry is None:
            return
        builder, last, slot = entry
        if chunk is not None and chunk is last[0]:
            return  # LangChain's second report of the same chunk
        message = getattr(chunk, "message", None)
        if (
            message is not None
            and getattr(message, "chunk_position", None) == "last"
            and not message.content
            and not getattr(message, "usage_metadata", None)
        ):
            return  # synthetic closing chunk, never on the wire
        last[0] = chunk
        stamp, slot[0] = slot[0], None
        content = message.content if message is not None else token
        builder.chunk(content if isinstance(content, str) else None, stamp)
        if message is None:
            return
        if builder.response_id is None and message.id and not message.id.startswith("lc_run"):
            builder.response_id = message.id
        usage = message.usage_metadata
        if usage:
            builder.chunk_usage(
                usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")
            )
        reason = message.response_metadata.get("finish_reason")
        if reason:
            builder.finish_seen(reason)

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        entry = self._runs.pop(run_id, None)
        if entry is None:
            return
        builder = entry[0]
        if builder.usage is None:
            _usage_from_result(builder, response)
        builder.finish()

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        entry = self._runs.pop(run_id, None)
        if entry is not None:
            entry[0].status_code = getattr(error, "status_code", None)
            entry[0].finish(error=error)


def _usage_from_result(builder: TraceBuilder, response: LLMResult) -> None:
    """A non-streamed run: usage and finish reason from the final result."""
    for gens in response.generations:
        for gen in gens:
            message = getattr(gen, "message", None)
            usage = getattr(message, "usage_metadata", None)
            if usage:
                builder.chunk_usage(
                    usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")
                )
            info = gen.generation_info or {}
            builder.finish_seen(info.get("finish_reason"))
            if message is not None and builder.response_id is None:
                builder.response_id = message.response_metadata.get("id") or None


def instrument_langchain(llm: Any, recorder: Recorder, label: str | None) -> Any:
    """A copy of ``llm`` (same class) that reports every run to ``recorder``."""
    base_url = getattr(llm, "openai_api_base", None) or getattr(llm, "base_url", None)
    handler = FairstreamCallbackHandler(recorder, label=label, base_url=base_url)
    existing = llm.callbacks
    if existing is None:
        callbacks: Any = [handler]
    elif isinstance(existing, list):
        callbacks = [*existing, handler]
    else:  # a callback manager
        callbacks = existing.copy()
        callbacks.add_handler(handler, inherit=True)
    update: dict[str, Any] = {"callbacks": callbacks}
    client = getattr(llm, "async_client", None)
    if (
        client is not None
        and hasattr(client, "create")
        and "async_client" in type(llm).model_fields
    ):
        update["async_client"] = _StampingCompletions(client)
    fields = type(llm).model_fields
    if "stream_usage" in fields and "stream_usage" not in llm.model_fields_set:
        update["stream_usage"] = True  # ask for the usage chunk, as with the openai SDK
    return llm.model_copy(update=update)


class _StampingCompletions:
    """Stands in for the SDK's ``chat.completions``; streams come back arrival-stamped."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def create(self, **kwargs: Any) -> Any:
        slot = _RUN_SLOT.get()
        result = await self._inner.create(**kwargs)
        if slot is None or not kwargs.get("stream"):
            return result
        return _StampingStream(result, slot)


class _StampingStream:
    """The SDK stream, unchanged, but each chunk leaves its arrival time in the run's slot."""

    def __init__(self, stream: Any, slot: list[float | None]) -> None:
        self._inner = stream
        self._slot = slot
        self._arrivals = stamp_response(getattr(stream, "response", None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __aiter__(self) -> _StampingStream:
        return self

    async def __anext__(self) -> Any:
        chunk = await self._inner.__anext__()
        arrivals = self._arrivals
        self._slot[0] = arrivals.popleft() if arrivals else None
        return chunk

    async def __aenter__(self) -> _StampingStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)
