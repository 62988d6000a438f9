"""LangChain: ``instrument(llm)`` and :class:`FairstreamCallbackHandler`.

``instrument`` returns a copy of the model *of its own class*, so ``astream``, ``ainvoke``,
``bind_tools``, ``with_structured_output`` and ``with_config`` behave exactly as before
and the result is still a ``BaseChatModel``.

Rule 1: a model that talks through the openai SDK (``ChatOpenAI`` and kin, Chat
        Completions API) is traced *at the SDK*: the copy's ``root_async_client`` and
        ``async_client`` are fairstream's traced client, which stamps each chunk's bytes on
        arrival. No LangChain callback is added, because LangChain dispatches every chunk to
        every attached handler (over 10 us a chunk, even to a handler that ignores it).
        Labels and ids come from ``instrument(label=...)`` and ``fairstream.tag(...)``.
Rule 2: any other model (and one set to use the Responses API) gets
        :class:`FairstreamCallbackHandler`, which also reads ``fairstream_label`` /
        ``fairstream_id`` from the run's metadata. It stamps a chunk when LangChain reports
        it; a repeated report of the same chunk object and LangChain's synthetic closing
        chunk are ignored. It runs inline (no task or thread per event).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from .._builder import TraceBuilder
from .._errors import require
from .._recorder import Recorder
from ._client import is_async_openai, traced_copy
from ._finish import OnIncomplete, end_stream
from ._openai import Settings

try:
    from langchain_core.callbacks import AsyncCallbackHandler
    from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult
except ImportError:  # pragma: no cover - exercised only without the extra
    require("langchain-core", "langchain")

__all__ = ["FairstreamCallbackHandler", "instrument_langchain"]


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
        # run id -> (builder, [last chunk object])
        self._runs: dict[UUID, tuple[TraceBuilder, list[Any]]] = {}

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
        self._runs[run_id] = (builder, [None])

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
        builder, last = entry
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
        content = message.content if message is not None else token
        text = content if isinstance(content, str) else None
        if message is None:
            builder.record(text)
            return
        rid = message.id if message.id and not message.id.startswith("lc_run") else None
        u = message.usage_metadata
        builder.record(
            text,
            None,
            _reason(message.response_metadata),
            rid,
            (u.get("input_tokens"), u.get("output_tokens"), u.get("total_tokens")) if u else None,
        )

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        entry = self._runs.pop(run_id, None)
        if entry is None:
            return
        builder = entry[0]
        if builder.usage is None:
            _usage_from_result(builder, response)
        # LangChain says the run ended. Models on this path (any provider) need not report
        # a finish reason, so its absence proves no cut here: the run is complete.
        builder.finish()

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        entry = self._runs.pop(run_id, None)
        if entry is not None:
            entry[0].status_code = getattr(error, "status_code", None)
            end_stream(entry[0], "failed", error)


def _reason(meta: dict[str, Any]) -> str | None:
    """The finish reason under the name each provider's LangChain model gives it."""
    return meta.get("finish_reason") or meta.get("stop_reason") or meta.get("done_reason")


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
                meta = message.response_metadata
                builder.response_id = meta.get("id") or None
                builder.response_model = meta.get("model_name") or meta.get("model") or None


def instrument_langchain(
    llm: Any,
    recorder: Recorder,
    label: str | None,
    dispatcher: Any = None,
    on_incomplete: OnIncomplete = "raise",
) -> Any:
    """A copy of ``llm`` (same class) that reports every run to ``recorder``."""
    base_url = getattr(llm, "openai_api_base", None) or getattr(llm, "base_url", None)
    fields = type(llm).model_fields
    update: dict[str, Any] = {}
    root = getattr(llm, "root_async_client", None)
    sdk_traced = (
        root is not None
        and "root_async_client" in fields
        and "async_client" in fields
        and hasattr(root, "chat")
        and is_async_openai(root)
    )
    if sdk_traced:
        # LangChain asks for the usage chunk itself (stream_usage), so we never add it
        settings = Settings(
            recorder,
            label,
            family="langchain",
            ask_usage=False,
            dispatcher=dispatcher,
            on_incomplete=on_incomplete,
        )
        traced = traced_copy(root, settings)
        update["root_async_client"] = traced
        update["async_client"] = traced.chat.completions
    elif dispatcher is not None:
        raise TypeError(
            "dispatcher= needs a model that talks through the openai SDK (ChatOpenAI and kin);"
            " for others, stream through it with `dispatcher.astream(llm, messages)`"
        )
    else:
        handler = FairstreamCallbackHandler(recorder, label=label, base_url=base_url)
        existing = llm.callbacks
        if existing is None:
            update["callbacks"] = [handler]
        elif isinstance(existing, list):
            update["callbacks"] = [*existing, handler]
        else:  # a callback manager
            manager = existing.copy()
            manager.add_handler(handler, inherit=True)
            update["callbacks"] = manager
    if "stream_usage" in fields and "stream_usage" not in llm.model_fields_set:
        update["stream_usage"] = True  # ask for the usage chunk, as with the openai SDK
    return llm.model_copy(update=update)
