"""Images with a question (multipart `images`): checked by content and size before anything is
saved, kept with the question, served to its asker alone, and read by the run that answers: OCR
offline (real Tesseract), plus the vision model's description through the real SDKs at the wire."""

from __future__ import annotations

import base64

import httpx
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

import apps.library.parsing  # noqa: F401  (registers pillow-heif's HEIC opener with Pillow)
from apps.chat.models import AgentRun, Conversation, Message, MessageAttachment
from apps.chat.services import run_execute
from apps.library.members import member_remove
from apps.library.models import FolderMembership
from tests.support.images import encoded, jpeg, photo, png, receipt_image
from tests.support.llm_wire_stub import OPENAI_PATH
from tests.support.questions import RECEIPT_QUESTION
from tests.support.sse_client import parse_sse
from tests.support.tokens import api_token

pytestmark = pytest.mark.django_db

RECEIPT = jpeg(photo(receipt_image(), rotate=0))  # a phone photo: tilted, unevenly lit, grainy
BLANK = png(Image.new("RGB", (40, 40), "red"))  # a picture with no text in it


def chat_url(folder) -> str:
    return f"/api/folders/{folder.pk}/chat"


def upload(name: str, data: bytes, content_type: str = "image/jpeg") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type=content_type)


def ask(client, folder, *images: SimpleUploadedFile, message: str = RECEIPT_QUESTION, **fields):
    return client.post(chat_url(folder), {"message": message, "images": list(images), **fields}, format="multipart")


@pytest.fixture
def queued(monkeypatch) -> list[str]:
    sent: list[str] = []
    monkeypatch.setattr("apps.chat.enqueue.execute_run", lambda run_id: sent.append(run_id))
    return sent


def test_images_are_kept_with_the_question_typed_by_their_content(auth_client, library, queued):
    # A PNG named .jpg and declared JPEG is a PNG: the bytes decide.
    response = ask(
        auth_client,
        library.folder,
        upload("receipt.jpg", RECEIPT),
        upload("scan.jpg", BLANK, "image/jpeg"),
        agent_mode="true",
    )

    assert response.status_code == 202, response.json()
    run = AgentRun.objects.get(pk=response.json()["run_id"])
    assert run.mode == "agent" and run.question.content == {"text": RECEIPT_QUESTION}
    kept = list(MessageAttachment.objects.filter(message=run.question).values_list("position", "name", "mime_type"))
    assert kept == [(1, "receipt.jpg", "image/jpeg"), (2, "scan.jpg", "image/png")]

    detail = auth_client.get(f"/api/conversations/{run.conversation_id}").json()
    (question,) = [message for message in detail["messages"] if message["role"] == "user"]
    assert [(image["name"], image["size"]) for image in question["attachments"]] == [
        ("receipt.jpg", len(RECEIPT)),
        ("scan.jpg", len(BLANK)),
    ]
    served = auth_client.get(question["attachments"][1]["url"], HTTP_ACCEPT="image/avif,image/webp,image/*")
    assert served.status_code == 200
    assert served.content == BLANK and served["Content-Type"] == "image/png"
    assert served["X-Content-Type-Options"] == "nosniff" and served["Content-Disposition"].startswith("inline")


def test_a_json_question_still_works_and_carries_no_images(auth_client, library, queued):
    response = auth_client.post(chat_url(library.folder), {"message": RECEIPT_QUESTION}, format="json")

    assert response.status_code == 202
    assert not MessageAttachment.objects.exists()


def test_heic_from_a_phone_is_accepted(auth_client, library, queued):
    heic = encoded(Image.new("RGB", (64, 48), "white"), "HEIF")

    response = ask(auth_client, library.folder, upload("IMG_0042.HEIC", heic, "application/octet-stream"))

    assert response.status_code == 202, response.json()
    assert MessageAttachment.objects.get().mime_type == "image/heic"


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        (
            "invoice.png",
            b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n",
            "invoice.png is a application/pdf file",
        ),
        ("notes.jpg", b"just some text, not a picture at all\n", "notes.jpg is not a picture in a known format"),
        ("scan.tiff", encoded(Image.new("L", (8, 8), 255), "TIFF"), "scan.tiff is a image/tiff file"),
        ("empty.png", b"", "empty.png is empty."),
    ],
)
def test_anything_but_the_accepted_types_is_refused_and_nothing_is_saved(
    auth_client, library, queued, name, data, says
):
    response = ask(auth_client, library.folder, upload("fine.jpg", RECEIPT), upload(name, data))

    assert response.status_code == 400
    assert says in response.json()["detail"]
    if data:
        assert "attach PNG, JPEG, WebP, GIF or HEIC images" in response.json()["detail"]
    assert not Message.objects.exists() and not Conversation.objects.exists() and queued == []


def test_too_many_or_too_large_images_are_refused(auth_client, library, queued, settings):
    settings.CHAT_MAX_IMAGES = 2
    too_many = ask(auth_client, library.folder, *(upload(f"r{n}.jpg", RECEIPT) for n in range(3)))
    assert too_many.status_code == 400
    assert too_many.json()["detail"] == "3 images were sent; a question may carry at most 2 (CHAT_MAX_IMAGES)."

    settings.CHAT_IMAGE_MAX_BYTES = len(RECEIPT) - 1
    too_large = ask(auth_client, library.folder, upload("receipt.jpg", RECEIPT))
    assert too_large.status_code == 400
    assert too_large.json()["detail"] == (
        f"receipt.jpg is {len(RECEIPT):,} bytes; an image may be at most {len(RECEIPT) - 1:,} bytes"
        " (CHAT_IMAGE_MAX_BYTES)."
    )
    assert not Message.objects.exists() and queued == []


def test_a_viewer_may_attach_and_only_the_asker_sees_the_images(
    library, queued, django_user_model, other_client, auth_client
):
    viewer = django_user_model.objects.create_user(username="vera")
    editor = django_user_model.objects.create_user(username="eddie")
    membership = FolderMembership.objects.create(folder=library.folder, user=viewer, role="viewer")
    FolderMembership.objects.create(folder=library.folder, user=editor, role="editor")
    as_viewer, as_editor = client_of(viewer), client_of(editor)

    response = ask(as_viewer, library.folder, upload("receipt.jpg", RECEIPT))

    assert response.status_code == 202, response.json()
    url = f"/api/attachments/{MessageAttachment.objects.get().pk}"
    assert as_viewer.get(url).content == RECEIPT
    # Another user, the folder's owner and an editor: the asker's conversation is not theirs.
    for stranger in (other_client, auth_client, as_editor):
        assert stranger.get(url).status_code == 404
    assert client_of(None).get(url).status_code in (401, 403)
    # A revoked viewer loses the folder's conversations, and their images with them.
    member_remove(membership=membership, actor=library.folder.owner)
    assert as_viewer.get(url).status_code == 404


def client_of(user):
    from rest_framework.test import APIClient

    client = APIClient()
    if user is not None:
        client.force_authenticate(user=user)
    return client


# -- answering from the images ------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_multipart_question_streams_an_answer_citing_its_image_through_the_server(asgi_server, library, user):
    """uvicorn, the request body cap, a token, and the run in the server's thread, as a script sees them."""
    with httpx.stream(
        "POST",
        f"{asgi_server.url}{chat_url(library.folder)}",
        headers={"Authorization": f"Bearer {api_token(user)}", "Accept": "text/event-stream"},
        data={"message": RECEIPT_QUESTION},
        files=[("images", ("receipt.jpg", RECEIPT, "image/jpeg"))],
        timeout=60,
    ) as response:
        assert response.status_code == 200, response.read()
        events = []
        for event in parse_sse(response.iter_lines()):
            events.append(event)
            if event.type in ("done", "error"):
                break

    phases = [event.data["phase"] for event in events if event.type == "status"]
    assert phases[:3] == ["reading_images", "searching", "generating"]
    (message,) = [event.data for event in events if event.type == "message"]
    assert "TOTAL EUR 27.20 [1]" in message["text"] and message["text"].endswith("Read the text of 1 attached image.")
    assert message["citations"][0]["attachment_id"] == MessageAttachment.objects.get().pk
    assert events[-1].type == "done"


def asked(client, folder, *images: SimpleUploadedFile, **fields) -> AgentRun:
    response = ask(client, folder, *images, **fields)
    assert response.status_code == 202, response.json()
    return AgentRun.objects.get(pk=response.json()["run_id"])


@pytest.mark.parametrize("agent_mode", ["false", "true"])
def test_the_answer_cites_the_images_text_read_offline_and_says_so(auth_client, library, queued, agent_mode):
    run = asked(auth_client, library.folder, upload("receipt.jpg", RECEIPT), agent_mode=agent_mode)

    run_execute(run_id=run.pk)

    run.refresh_from_db()
    answer = run.answer.content
    assert "TOTAL EUR 27.20 [1]" in answer["text"]
    assert answer["text"].endswith("\n\nRead the text of 1 attached image.")
    (citation,) = [citation for citation in answer["citations"] if citation["n"] == 1]
    attachment = MessageAttachment.objects.get()
    assert citation["attachment_id"] == attachment.pk and citation["file_id"] is None
    assert (citation["file_name"], citation["location"]) == ("receipt.jpg", "image 1, text read by OCR")
    assert "HARBOR MARKET" in attachment.text and attachment.read_at is not None
    # The conversation shows the citation as present: an image stays while its conversation does.
    detail = auth_client.get(f"/api/conversations/{run.conversation_id}").json()
    shown = detail["messages"][-1]["citations"][0]
    assert shown["attachment_id"] == attachment.pk and shown["source_removed"] is False


def test_an_image_without_text_is_named_in_the_answer_as_unread(auth_client, library, queued):
    run = asked(auth_client, library.folder, upload("red.png", BLANK), message="What is in the picture?")

    run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == "completed"
    assert run.answer.content["text"].endswith("Could not read red.png: no text found in the image.")
    assert all(citation.get("attachment_id") is None for citation in run.answer.content["citations"])


def test_a_regenerated_answer_reuses_what_was_read(auth_client, library, queued, monkeypatch):
    run = asked(auth_client, library.folder, upload("receipt.jpg", RECEIPT))
    run_execute(run_id=run.pk)

    def no_second_reading(**kwargs):
        raise AssertionError("the image was read again")

    monkeypatch.setattr("apps.chat.image_reading.parse_document", no_second_reading)
    again = auth_client.post(f"/api/conversations/{run.conversation_id}/regenerate")
    assert again.status_code == 202
    regenerated = run_execute(run_id=again.json()["run_id"])

    assert "TOTAL EUR 27.20 [1]" in regenerated.answer.content["text"]


@pytest.fixture
def vision(settings, sdk) -> str:
    settings.LLM_VISION = True  # as for OpenAI and Anthropic themselves (the stub is a base URL)
    return sdk


def test_a_vision_model_describes_each_image_through_the_real_sdk(auth_client, library, queued, vision, wire_stub):
    wire_stub.reply_text("A till receipt from Harbor Market; the total is 27.20 euros.")  # the description
    wire_stub.reply_text("The receipt's total was 27.20 euros [1].")  # the answer

    run = asked(auth_client, library.folder, upload("receipt.jpg", RECEIPT))
    run_execute(run_id=run.pk)

    run.refresh_from_db()
    described, answered = wire_stub.requests
    content = described.body["messages"][-1]["content"]
    encoded_receipt = base64.b64encode(RECEIPT).decode()
    if described.path == OPENAI_PATH:
        assert content[0]["image_url"]["url"] == f"data:image/jpeg;base64,{encoded_receipt}"
    else:
        assert content[0]["source"] == {"type": "base64", "media_type": "image/jpeg", "data": encoded_receipt}
    assert RECEIPT_QUESTION in str(content)
    # The answer's sources hold both readings of the image, as source 1.
    prompt = str(answered.body["messages"][-1]["content"])
    assert "A till receipt from Harbor Market" in prompt and "TOTAL EUR 27.20" in prompt
    assert 'location="image 1, text read by OCR"' in prompt
    text = run.answer.content["text"]
    assert text == (
        "The receipt's total was 27.20 euros [1].\n\n"
        "Read the text of 1 attached image and the vision model's description of it."
    )
    assert run.answer.content["citations"][0]["attachment_id"] == MessageAttachment.objects.get().pk
    assert run.metrics["tokens"]["input"] > 0


def test_heic_goes_to_the_vision_model_as_jpeg(auth_client, library, queued, vision, wire_stub):
    wire_stub.reply_text("A white square.")
    wire_stub.reply_text("It is a white square [1].")
    heic = encoded(Image.new("RGB", (64, 48), "white"), "HEIF")

    run = asked(auth_client, library.folder, upload("IMG_0042.HEIC", heic), message="What does the photo show?")
    run_execute(run_id=run.pk)

    sent = str(wire_stub.requests[0].body["messages"][-1]["content"])
    assert "image/jpeg" in sent and "image/heic" not in sent
    run.refresh_from_db()
    assert run.answer.content["text"].endswith("Read the vision model's description of 1 attached image.")


def test_the_vision_model_failing_leaves_the_text_read_offline(auth_client, library, queued, vision, wire_stub):
    wire_stub.fail(400)  # a model that takes no images, say
    wire_stub.reply_text("The total was 27.20 euros [1].")

    run = asked(auth_client, library.folder, upload("receipt.jpg", RECEIPT))
    run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.answer.content["text"].endswith("\n\nRead the text of 1 attached image.")
    assert MessageAttachment.objects.get().description == ""


def test_the_vision_reading_is_skipped_without_vision(auth_client, library, queued, sdk, wire_stub, settings):
    settings.LLM_VISION = False
    wire_stub.reply_text("The total was 27.20 euros [1].")

    run = asked(auth_client, library.folder, upload("receipt.jpg", RECEIPT))
    run_execute(run_id=run.pk)

    (answered,) = wire_stub.requests  # only the answer: no image went to the model
    assert "image_url" not in str(answered.body) and "base64" not in str(answered.body)
    assert "TOTAL EUR 27.20" in str(answered.body["messages"][-1]["content"])
