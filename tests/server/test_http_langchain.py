"""The reference server through LangChain's ChatOpenAI, the seed's own loop."""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from tests.conftest import ServerFactory


def make_llm(base_url: str, max_tokens: int) -> ChatOpenAI:
    return ChatOpenAI(
        model="fairstream-ref",
        base_url=base_url,
        api_key="k",  # type: ignore[arg-type]
        max_tokens=max_tokens,  # type: ignore[call-arg]
        stream_usage=True,
        extra_body={"ignore_eos": True},
    )


async def test_astream_yields_content_and_usage(serve: ServerFactory) -> None:
    async with serve() as server:
        llm = make_llm(server.base_url, 7)
        chunks = [c async for c in llm.astream([("system", "be brief"), ("human", "hi")])]
    text = "".join(str(c.content) for c in chunks)
    assert len(text.split()) == 7
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert usage and usage[-1]["output_tokens"] == 7
    assert any(c.response_metadata.get("finish_reason") == "length" for c in chunks)
