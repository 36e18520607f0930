"""A server-sent-events parser, as the HTML standard says: LF, CR or CRLF line ends, ``:``
comments, the id/event/data/retry fields, a message dispatched at each blank line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SseMessage:
    #: the message's ``id:``, or None when it had none
    id: str | None
    event: str
    data: str


class SseParser:
    def __init__(self) -> None:
        self._buffer = ""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        #: the last ``retry:`` the server sent, in ms
        self.retry_ms: int | None = None

    def push(self, text: str) -> list[SseMessage]:
        """Feeds decoded text; returns the messages it completed."""
        self._buffer += text
        messages: list[SseMessage] = []
        start = 0
        i = 0
        buffer = self._buffer
        while i < len(buffer):
            char = buffer[i]
            if char not in "\r\n":
                i += 1
                continue
            # A CR at the very end may be the first half of a CRLF split across chunks: wait for more.
            if char == "\r" and i == len(buffer) - 1:
                break
            message = self._line(buffer[start:i])
            if message is not None:
                messages.append(message)
            if char == "\r" and buffer[i + 1] == "\n":
                i += 1
            i += 1
            start = i
        self._buffer = buffer[start:]
        return messages

    def _line(self, line: str) -> SseMessage | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
        elif field == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> SseMessage | None:
        message = (
            None
            if not self._data and self._id is None
            else SseMessage(id=self._id, event=self._event or "message", data="\n".join(self._data))
        )
        self._data = []
        self._event = ""
        self._id = None
        return message
