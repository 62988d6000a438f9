"""LangChain: ``instrument(llm)`` and :class:`FairstreamCallbackHandler`.

``instrument`` returns a copy of the model *of its own class* with the handler in its
``callbacks``, so ``astream``, ``ainvoke``, ``bind_tools``, ``with_structured_output``
and ``with_config`` behave exactly as before and the result is still a ``BaseChatModel``.

Rule 1: the handler starts a trace for every chat-model run and ends it on the run's end
        or error, whichever path the model takes (streamed or not, tools, structured
        output): every run leaves one trace.
Rule 2: models that stream through the openai SDK (``ChatOpenAI`` and kin) also get
        fairstream's traced completions as ``async_client``. Their streams fill the run's
        trace at the SDK, each chunk stamped when its bytes arrive, and while such a stream
        runs the handler tells LangChain to skip it (``ignore_llm``), so LangChain's own
        per-chunk callback dispatch (over 10 us a chunk once a handler listens) is not paid.
Rule 3: other models are stamped when LangChain reports a chunk; a repeated report of the
        same chunk object and LangChain's synthetic closing chunk are ignored.
Rule 4: handlers run inline (no task or thread per event).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from .._builder import TraceBuilder
from .._errors import require
from .._recorder import Recorder
from ._openai import TracedCompletions

try:
    from langchain_core.callbacks import AsyncCallbackHandler
    from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult
except ImportError:  # pragma: no cover - exercised only without the extra
    require("langchain-core", "langchain")

__all__ = ["FairstreamCallbackHandler", "instrument_langchain"]


class _RunState:
    """The chat-model run starting in this task: its trace, and whether the SDK streams it.

    A mutable object in a context variable, not two variables: LangChain may iterate the
    SDK stream in a helper task (a copy of the context), and a flag set there must still
    be seen here.
    """

    __slots__ = ("builder", "streaming")

    def __init__(self, builder: TraceBuilder) -> None:
        self.builder: TraceBuilder | None = builder
        self.streaming = False


_RUN: ContextVar[_RunState | None] = ContextVar("fairstream_lc_run", default=None)


class FairstreamCallbackHandler(AsyncCallbackHandler):
    """Records a trace per chat-model run; attach it through ``callbacks=[...]``."""

    run_inline = True  # called directly: no task or thread per event

    @property
    def ignore_llm(self) -> bool:
        """True while the run's stream is traced at the SDK: LangChain then skips us."""
        state = _RUN.get()
        return state is not None and state.streaming

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
        _RUN.set(_RunState(builder))

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
        builder.chunk(content if isinstance(content, str) else None)
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


class _Hooks:
    """Lets the SDK-level stream fill in the trace the handler started for the run."""

    def adopt(self) -> tuple[TraceBuilder, Callable[[bool], None]] | None:
        state = _RUN.get()
        if state is None or state.builder is None or state.builder.done:
            return None
        builder, state.builder = state.builder, None

        def streaming(active: bool) -> None:
            state.streaming = active

        return builder, streaming


def instrument_langchain(llm: Any, recorder: Recorder, label: str | None) -> Any:
    """A copy of ``llm`` (same class) that reports every run to ``recorder``."""
    base_url = getattr(llm, "openai_api_base", None) or getattr(llm, "base_url", None)
    fields = type(llm).model_fields
    update: dict[str, Any] = {}
    client = getattr(llm, "async_client", None)
    if client is not None and hasattr(client, "create") and "async_client" in fields:
        update["async_client"] = TracedCompletions(
            client,
            recorder,
            label=label,
            base_url=base_url,
            client="langchain",
            hooks=_Hooks(),
            ask_usage=False,  # LangChain asks through stream_usage
        )
    handler = FairstreamCallbackHandler(recorder, label=label, base_url=base_url)
    existing = llm.callbacks
    if existing is None:
        callbacks: Any = [handler]
    elif isinstance(existing, list):
        callbacks = [*existing, handler]
    else:  # a callback manager
        callbacks = existing.copy()
        callbacks.add_handler(handler, inherit=True)
    update["callbacks"] = callbacks
    if "stream_usage" in fields and "stream_usage" not in llm.model_fields_set:
        update["stream_usage"] = True  # ask for the usage chunk, as with the openai SDK
    return llm.model_copy(update=update)
