"""The sealed rows at rest stay readable: values sealed by each envelope as it was written before
`storage/envelope.py` (literals made with that code, key bytes 0..31) open with the code of today."""

from __future__ import annotations

from webhost.auth.signin import IdTokenSeal
from webhost.storage.chat_seal import BytesSeal, ChatSeal
from webhost.storage.envelope import Envelope
from webhost.storage.inputs import InputVault
from webhost.storage.live_calls import RoundSeal
from webhost.storage.oauth_tokens import OAuthVault

KEY = bytes(range(32))
ID_TOKEN = bytes.fromhex("0171a4503649adadaff366ff0566beb8a7d746c9249efc75ed830a33dd24ed296a20a26f5ceca306a5")
ROUND = bytes.fromhex(
    "011bfbaf08029b9f0832aafa65a6e0fb720a86ee9a9ea1a98749c6c3e3b98fa3266d52b642804c404c1b43ae017dad196012a8443e7f6379d1bc55"
)
INPUT = bytes.fromhex("0127d924963d41ac23a9e893a957b9aacdd4c07af75d57291346eee98506a5d3ec78df")
CHAT = bytes.fromhex(
    "01670ca4216f24e7f5a3ce8a64aefd1da82284e8af4a2ace9c5d95ea17b83ca3ade824e279f26df0d7921dda5849fda195122e5eb3928373"
)
BYTES = bytes.fromhex("019cc104c589d378e575becf16ba64717c3b6448bd9ad27e9017bb480d473eddbc86")
OAUTH = bytes.fromhex(
    "0114392fca409266a693c69cbfd28ad5aefb77d5d97f45f4cef3eb37bcfa485ab68808490b1043c89a6a672042d448b137da0d76993fa9d7dc7158637e9ecc58e7d5"
)


def test_an_id_token_sealed_before_opens() -> None:
    seal = IdTokenSeal(KEY)
    assert seal.open("session-1", "alice", ID_TOKEN) == "eyJ.id.token"
    assert seal.open("session-2", "alice", ID_TOKEN) is None  # moved to another session


def test_a_round_sealed_before_opens() -> None:
    seal = RoundSeal(KEY)
    assert seal.open("alice", "row-1", ROUND) == {"round": 1, "text": "héllo"}
    assert seal.open("bob", "row-1", ROUND) is None


def test_an_input_value_sealed_before_opens() -> None:
    vault = InputVault(None, KEY)  # type: ignore[arg-type]  # sealing needs no storage
    assert vault._open("alice", "api-key", INPUT) == "s3cret"
    assert vault._open("alice", "other", INPUT) is None


def test_a_chat_value_and_bytes_sealed_before_open() -> None:
    chat = ChatSeal(KEY)
    assert chat.open("alice", "conv-1", "message", CHAT) == {"role": "user", "text": "hi"}
    assert chat.open("alice", "conv-1", "title", CHAT) is None
    raw = BytesSeal(chat)
    assert raw.open("alice", "att-1", "attachment", BYTES) == b"\x00\x01raw"
    assert raw.open("alice", "att-2", "attachment", BYTES) is None


def test_an_oauth_grant_sealed_before_opens() -> None:
    vault = OAuthVault(None, KEY)  # type: ignore[arg-type]
    assert vault._open("alice", "github", "tokens", OAUTH) == {"access_token": "at", "expires_in": 60}
    assert vault._open("alice", "github", "client", OAUTH) is None


def test_the_envelope_keeps_its_layout() -> None:
    envelope = Envelope(KEY)
    sealed = envelope.seal(b"value", b"bound")
    assert sealed[:1] == b"\x01" and len(sealed) == 1 + 12 + len(b"value") + 16  # version, nonce, text, tag
    assert envelope.open(sealed, b"bound") == b"value"
    assert envelope.open(b"\x02" + sealed[1:], b"bound") is None  # another version
    assert envelope.open(sealed[:-1] + bytes([sealed[-1] ^ 1]), b"bound") is None  # tampered with
    assert Envelope(bytes(32)).open(sealed, b"bound") is None  # another secret
