"""The content endpoint as `make run` serves it (uvicorn, ASGI): streamed in blocks as it is read,
never gathered whole first (Django lists a synchronous iterator under ASGI and warns so)."""

from __future__ import annotations

import hashlib
import os

import httpx
import pytest

from tests.support.originals import file_row
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db(transaction=True)

SIZE = 12 * 1024 * 1024 + 17


def test_a_large_file_streams_whole_and_by_range_over_asgi(asgi_server, root, folder, user):
    content = os.urandom(SIZE)
    (root / "big.bin").write_bytes(content)
    file = file_row(folder=folder, path="big.bin", mime_type="application/octet-stream", size=SIZE)
    headers = {"Authorization": f"Token {api_token(user)}"}
    url = f"{asgi_server.url}/api/files/{file.pk}/content"
    log_before = asgi_server.log_path.read_text()

    with httpx.Client(headers=headers, timeout=30) as client:
        digest, pieces = hashlib.sha256(), 0
        with client.stream("GET", url) as response:
            assert response.status_code == 200
            assert response.headers["content-length"] == str(SIZE)
            assert response.headers["content-disposition"] == 'attachment; filename="big.bin"'
            for piece in response.iter_raw():
                digest.update(piece)
                pieces += 1
        assert digest.hexdigest() == hashlib.sha256(content).hexdigest()
        assert pieces > 1

        middle = client.get(url, headers={"Range": f"bytes={SIZE // 2}-{SIZE // 2 + 99}"})
        assert middle.status_code == 206
        assert middle.content == content[SIZE // 2 : SIZE // 2 + 100]
        assert middle.headers["content-range"] == f"bytes {SIZE // 2}-{SIZE // 2 + 99}/{SIZE}"
        assert client.get(url, headers={"Range": f"bytes={SIZE}-"}).status_code == 416

    logged = asgi_server.log_path.read_text()[len(log_before) :]
    assert "must consume synchronous iterators" not in logged
