"""How a conversation is placed in each wire's body (the endpoint tests check the body is what is sent)."""

from __future__ import annotations

from webhost.chat.providers import ModelEndpoint, open_provider
from webhost.chat.providers.anthropic_body import anthropic_body, tool_input
from webhost.chat.providers.messages import (
    AssistantMessage,
    ChatRequest,
    ImageBlock,
    Message,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)
from webhost.chat.providers.openai_body import openai_body

PNG = ImageBlock("iVBORw0KGgo=", "image/png")
CALLS = (ToolCall("c1", "shot", "{}"), ToolCall("c2", "shot", '{"n": 2}'))


def request(*messages: Message, system: str = "") -> ChatRequest:
    return ChatRequest("m", system, messages, (ToolSpec("shot", "A screenshot.", {"type": "object"}),), 100)


def test_openai_images_of_a_run_of_tool_results_follow_the_whole_run() -> None:
    body = openai_body(
        request(
            UserMessage((TextBlock("go"),)),
            AssistantMessage("", CALLS),
            ToolResult("c1", (PNG,)),
            ToolResult("c2", (TextBlock("second"), PNG)),
        ),
        official=False,
    )
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "user"]
    assert body["messages"][1]["content"] is None
    assert body["messages"][2]["content"] == "(the result is an image, in the next message)"
    images = body["messages"][4]["content"]
    assert images[0] == {"type": "text", "text": "Images from tool calls c1, c2:"}
    assert [part["type"] for part in images[1:]] == ["image_url", "image_url"]
    assert images[1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="


def test_openai_error_results_say_so_and_text_only_users_are_strings() -> None:
    body = openai_body(
        request(
            UserMessage((TextBlock("a"), TextBlock("b"))),
            AssistantMessage("", CALLS[:1]),
            ToolResult("c1", (TextBlock("denied by the person"),), is_error=True),
            system="sys",
        ),
        official=False,
    )
    assert body["messages"][0] == {"role": "system", "content": "sys"}
    assert body["messages"][1] == {"role": "user", "content": "a\n\nb"}
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "Error: denied by the person"}
    assert body["max_tokens"] == 100 and "max_completion_tokens" not in body
    assert body["tools"][0]["function"]["parameters"] == {"type": "object"}


def test_openai_s_own_api_gets_max_completion_tokens() -> None:
    provider = open_provider(ModelEndpoint("gpt", "openai", "gpt-5.1", None, "sk-x"))
    body = provider.wire_body(request(UserMessage((TextBlock("hi"),))))
    assert body["max_completion_tokens"] == 100 and "max_tokens" not in body


def test_an_image_type_the_wires_do_not_take_becomes_a_line_of_text() -> None:
    svg = ImageBlock("PHN2Zy8+", "image/svg+xml")
    body = anthropic_body(request(UserMessage((TextBlock("see"), svg))))
    assert body["messages"][0]["content"][1] == {
        "type": "text",
        "text": "(an image of type image/svg+xml, which the model cannot be given)",
    }


def test_anthropic_merges_consecutive_user_turns_and_keeps_results_first() -> None:
    body = anthropic_body(
        request(
            UserMessage((TextBlock("go"),)),
            AssistantMessage("Taking both.", CALLS),
            ToolResult("c1", (PNG,)),
            ToolResult("c2", (), is_error=True),
            UserMessage((TextBlock("and?"),)),
            system="sys",
        )
    )
    assert body["system"] == "sys" and body["stream"] is True
    user, assistant, results = body["messages"]
    assert user == {"role": "user", "content": [{"type": "text", "text": "go"}]}
    assert [block["type"] for block in assistant["content"]] == ["text", "tool_use", "tool_use"]
    assert assistant["content"][2]["input"] == {"n": 2}
    assert [block["type"] for block in results["content"]] == ["tool_result", "tool_result", "text"]
    assert results["content"][0]["content"][0]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": "iVBORw0KGgo=",
    }
    assert results["content"][1] == {"type": "tool_result", "tool_use_id": "c2", "is_error": True}
    assert body["tools"][0]["eager_input_streaming"] is True


def test_tool_input_is_always_an_object() -> None:
    assert tool_input('{"a": 1}') == {"a": 1}
    assert tool_input('{"a": "unfinish') == {"a": "unfinish"}
    assert tool_input("[1, 2]") == {}
    assert tool_input("") == {}
    assert tool_input("not json") == {}
