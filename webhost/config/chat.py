"""`webhost.chat` in the configuration file: the team's model endpoints and how the chat uses them (contract §8).

Read with the rest of the file by `file.py` (same rules: `${VAR}` expanded from the environment,
`${input:ID}` left for each person, one clear line for a bad value). docs/chat.md documents each key.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from webhost.config.refs import INPUT_REF, Expanded, invalid

Decision = Literal["allow", "ask", "deny"]
ModelApi = Literal["openai", "anthropic"]
DEFAULT_CONTEXT_TOKENS = 32_768  # what most current models take at least; a team sets its model's own
_MODEL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
MAX_SYSTEM_PROMPT_CHARS = 100_000
MAX_MODEL_NAME_CHARS = 200
DEFAULT_SYSTEM_PROMPT = (
    "You are the assistant of a team that uses webhost. You can call the tools of the MCP servers the person "
    "has connected; call them when they help, and say plainly what they returned."
)


def _base_url(value: str | None) -> str | None:
    """A wrong host or path is the endpoint's answer, shown in the conversation; a value that is not an
    http(s) URL at all is a mistake in the file, refused at start."""
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise invalid('must be an absolute http:// or https:// URL (for "openai" up to and including /v1)')
    return value.rstrip("/")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")


class ModelPrice(_Model):
    """What a model's endpoint charges, in USD per million tokens (the admin view's cost column)."""

    input: float = Field(strict=True, ge=0, le=1_000_000)
    output: float = Field(strict=True, ge=0, le=1_000_000)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


class ChatModel(_Model):
    """One entry of `webhost.chat.models`: a model on an endpoint of one of the two wire formats."""

    id: Annotated[str, StringConstraints(pattern=_MODEL_ID_PATTERN)]
    api: ModelApi
    model: Annotated[str, StringConstraints(min_length=1, max_length=MAX_MODEL_NAME_CHARS)]
    base_url: Annotated[Expanded | None, AfterValidator(_base_url)] = Field(default=None, validation_alias="baseUrl")
    api_key: Expanded | None = Field(default=None, validation_alias="apiKey", repr=False)
    label: str | None = Field(default=None, validation_alias="name")
    max_tokens: int = Field(default=4096, validation_alias="maxTokens", strict=True, ge=16, le=1_000_000)
    # The model's context window: a request that would pass it leaves out the oldest turns (chat/prompt.py).
    context_tokens: int = Field(
        default=DEFAULT_CONTEXT_TOKENS, validation_alias="contextTokens", strict=True, ge=512, le=100_000_000
    )
    vision: bool = Field(default=False, strict=True)  # takes image blocks (an image attachment is refused without)
    price: ModelPrice | None = None

    @property
    def key_input(self) -> str | None:
        """The `${input:ID}` each person gives as their own key, if the key is one."""
        match = INPUT_REF.fullmatch(self.api_key or "")
        return match.group(1) if match else None

    @property
    def input_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(INPUT_REF.findall(self.api_key or "")))

    def public(self) -> dict[str, Any]:
        """What the page may know of the model (never its key)."""
        return {
            "id": self.id,
            "label": self.label or self.id,
            "api": self.api,
            "model": self.model,
            "keyInput": self.key_input,
            "vision": self.vision,
        }


class ChatOptions(_Model):
    """`webhost.chat`: the models, the system prompt, and the limits of a turn."""

    models: tuple[ChatModel, ...] = ()
    system_prompt: str = Field(
        default=DEFAULT_SYSTEM_PROMPT, validation_alias="systemPrompt", max_length=MAX_SYSTEM_PROMPT_CHARS
    )
    tool_calls: Decision = Field(default="ask", validation_alias="toolCalls")
    max_steps: int = Field(default=10, validation_alias="maxSteps", strict=True, ge=1, le=100)
    max_tool_result_chars: int = Field(
        default=20_000, validation_alias="maxToolResultChars", strict=True, ge=500, le=10_000_000
    )
    max_app_context_chars: int = Field(
        default=4_000, validation_alias="maxAppContextChars", strict=True, ge=100, le=1_000_000
    )
    max_context_chars: int = Field(
        default=16_000, validation_alias="maxContextChars", strict=True, ge=100, le=4_000_000
    )
    max_attachment_bytes: int = Field(
        default=10_000_000, validation_alias="maxAttachmentBytes", strict=True, ge=1000, le=100_000_000
    )
    max_attachment_text_chars: int = Field(
        default=100_000, validation_alias="maxAttachmentTextChars", strict=True, ge=100, le=10_000_000
    )
    attachment_bytes_per_person: int = Field(
        default=200_000_000, validation_alias="attachmentBytesPerPerson", strict=True, ge=0
    )
    daily_token_budget: int | None = Field(default=None, validation_alias="dailyTokenBudget", strict=True, ge=1)
    app_messages_per_minute: int = Field(
        default=10, validation_alias="appMessagesPerMinute", strict=True, ge=1, le=10_000
    )
    # A new conversation's title asked of the model after its first answer (one short request); false: the
    # cleaned first line of the first message (titles.py) stays.
    auto_title: bool = Field(default=True, validation_alias="autoTitle", strict=True)
    # The servers whose tools a new conversation offers the model (the person changes it per conversation);
    # None: every connected server.
    default_servers: tuple[Annotated[str, StringConstraints(min_length=1)], ...] | None = Field(
        default=None, validation_alias="defaultServers"
    )

    @model_validator(mode="after")
    def _unique_ids(self) -> ChatOptions:
        seen: set[str] = set()
        for index, model in enumerate(self.models):
            if model.id in seen:
                raise invalid(f"models[{index}]: the id {model.id!r} is used twice")
            seen.add(model.id)
        return self

    def model(self, model_id: str | None) -> ChatModel | None:
        """The model with this id; None: the first (the default)."""
        if model_id is None:
            return self.models[0] if self.models else None
        return next((m for m in self.models if m.id == model_id), None)

    @property
    def secret_values(self) -> frozenset[str]:
        """The keys that came from the file or the environment (a person's own key is theirs: workspace.py)."""
        return frozenset(m.api_key for m in self.models if m.api_key and m.key_input is None and "${" not in m.api_key)


# Messages for pydantic's own errors under `webhost.chat` (file.py merges them into its table).
CHAT_MESSAGES = {
    "webhost.chat": "must be an object",
    "webhost.chat.models": 'must be a list of {"id", "api", "model"} objects',
    "webhost.chat.models.*": 'must be an object with "id", "api" and "model"',
    "webhost.chat.models.*.id": "must be a string of letters, digits, '.', '_' and '-' (at most 64), "
    "starting with a letter or digit",
    "webhost.chat.models.*.api": 'must be "openai" or "anthropic"',
    "webhost.chat.models.*.model": f"must be a non-empty string of at most {MAX_MODEL_NAME_CHARS} characters "
    "(the model's name at the endpoint)",
    "webhost.chat.models.*.baseUrl": "must be a string (an http:// or https:// URL)",
    "webhost.chat.models.*.apiKey": 'must be a string (usually "${VARIABLE}" or "${input:ID}")',
    "webhost.chat.models.*.name": "must be a string",
    "webhost.chat.models.*.maxTokens": "must be an integer from 16 to 1000000",
    "webhost.chat.models.*.contextTokens": "must be an integer from 512 to 100000000 (the model's context, in tokens)",
    "webhost.chat.models.*.vision": "must be true or false",
    "webhost.chat.maxAttachmentBytes": "must be an integer from 1000 to 100000000",
    "webhost.chat.maxAttachmentTextChars": "must be an integer from 100 to 10000000",
    "webhost.chat.attachmentBytesPerPerson": "must be a non-negative integer (bytes)",
    "webhost.chat.models.*.price": 'must be an object {"input": USD, "output": USD} (per million tokens)',
    "webhost.chat.models.*.price.input": "must be a number from 0 to 1000000 (USD per million input tokens)",
    "webhost.chat.models.*.price.output": "must be a number from 0 to 1000000 (USD per million output tokens)",
    "webhost.chat.systemPrompt": f"must be a string of at most {MAX_SYSTEM_PROMPT_CHARS} characters",
    "webhost.chat.toolCalls": 'must be "allow", "ask" or "deny"',
    "webhost.chat.maxSteps": "must be an integer from 1 to 100",
    "webhost.chat.maxToolResultChars": "must be an integer from 500 to 10000000",
    "webhost.chat.maxAppContextChars": "must be an integer from 100 to 1000000",
    "webhost.chat.maxContextChars": "must be an integer from 100 to 4000000",
    "webhost.chat.dailyTokenBudget": "must be a positive integer (tokens per person per day), or null",
    "webhost.chat.appMessagesPerMinute": "must be an integer from 1 to 10000",
    "webhost.chat.autoTitle": "must be true or false",
    "webhost.chat.defaultServers": "must be a list of server names, or null (every connected server)",
    "webhost.chat.defaultServers.*": "must be a server name (a non-empty string)",
}
