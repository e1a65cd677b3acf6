"""Message schemas kafka-python does not ship (read by `kafkatool.cluster.kip848`, `share_groups` and
`streams_groups`), and the message classes built from them."""

from __future__ import annotations

import sys
import types
from typing import Any


def api_messages(api: str) -> tuple[Any, Any]:
    """kafka-python's request and response classes for `api` (`<api>Request`, `<api>Response`), built by its
    own JSON-schema machinery from the specs here, as `class <api>Request(ApiMessage, load_json=...)` would.
    Keep both: a response class registers itself with kafka-python only by a weak reference."""
    from kafka.protocol.api_message import ApiMessage

    here = sys.modules[__name__]
    return tuple(  # type: ignore[return-value]
        types.new_class(
            api + kind, (ApiMessage,), {"load_json": here}, lambda ns: ns.update(__module__=__name__)
        )
        for kind in ("Request", "Response")
    )
