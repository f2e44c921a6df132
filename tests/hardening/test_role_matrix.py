"""Every /api/ route by a member of the owner's folder, as viewer and as editor: each route and
method has an expected row below, so a new route without one fails the suite.

Rules: `user` is not about one folder (any signed-in person gets through, seeing only their own);
`view` / `edit` / `manage` is the least folder role allowed (below it: 403 with a message);
`author` is private to whoever made it (a member gets the same 404 as a stranger);
`editors` is an object only editors and the owner see (a viewer gets 404);
`staff` is for the site's staff alone (any member gets 403)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.library.models import FolderMembership
from tests.hardening.test_access_matrix import PUBLIC, ROUTES, _call, _client, _kwargs

pytestmark = pytest.mark.django_db

USER, VIEW, EDIT, MANAGE, AUTHOR, EDITORS, STAFF = "user", "view", "edit", "manage", "author", "editors", "staff"

RULES: dict[str, dict[str, str]] = {
    "agent-metrics": {"get": USER},
    "attachment-content": {"get": AUTHOR},  # an image of the asker's question, like their conversation
    "auth-token-revoke": {"post": USER},
    "conversation-archive": {"post": AUTHOR},
    "conversation-detail": {"get": AUTHOR, "patch": AUTHOR, "delete": AUTHOR},
    "conversation-regenerate": {"post": AUTHOR},
    "conversations": {"get": USER},
    "drive-callback": {"get": USER},
    "drive-connect": {"get": USER},
    "drive-disconnect": {"post": USER},
    "drive-folders": {"get": USER},
    "drive-status": {"get": USER},
    # Evaluation sets: editors make, change, run and delete them; viewers read them and their runs.
    "evaluation-detail": {"get": VIEW, "patch": EDIT, "delete": EDIT},
    "evaluation-run-detail": {"get": VIEW},
    "evaluation-runs": {"post": EDIT},
    "file-chunks": {"get": VIEW},
    "file-content": {"get": VIEW},
    "file-detail": {"get": VIEW},
    "file-retry": {"post": EDIT},
    "folder-audit": {"get": MANAGE},
    "folder-chat": {"post": VIEW},
    "folder-detail": {"get": VIEW, "patch": EDIT, "delete": MANAGE},
    "folder-evaluations": {"get": VIEW, "post": EDIT},
    "folder-evaluations-generate": {"post": EDIT},  # questions drawn for a set, not saved
    # Rated answers: the counts for every member; the answers for editors, a viewer's own (the API).
    "folder-feedback": {"get": VIEW},
    "folder-events": {"get": VIEW},
    "folder-files": {"get": VIEW},
    "folder-files-retry": {"post": EDIT},
    "folder-invitation-detail": {"delete": MANAGE},
    "folder-invitations": {"get": MANAGE, "post": MANAGE},
    "folder-member-detail": {"patch": MANAGE, "delete": MANAGE},
    "folder-members": {"get": VIEW, "post": MANAGE},
    "folder-reindex": {"post": EDIT},
    "folder-search": {"post": VIEW},
    "folder-sync": {"post": EDIT},
    "folder-sync-log": {"get": VIEW},
    "folders": {"get": USER, "post": USER},
    "inbox-conversation-archive": {"post": AUTHOR},
    "inbox-conversation-detail": {"get": AUTHOR},
    "inbox-conversation-messages": {"post": AUTHOR},
    "inbox-conversations": {"get": USER, "post": USER},
    "inbox-events": {"get": EDITORS},  # a viewer organizes no folder: nothing to follow
    # folder_id is in the (multipart) body: tests/inbox/test_upload.py checks each role's answer.
    "inbox-files": {"post": USER},
    "inbox-files-unsuggested": {"get": USER},
    "inbox-folder-tree": {"get": EDIT},
    "inbox-guideline-proposal-respond": {"post": EDIT},
    "inbox-move-undo": {"post": EDITORS},
    "inbox-moves": {"get": USER},
    "inbox-organize": {"post": USER},
    "inbox-suggestion-respond": {"post": EDITORS},
    "inbox-suggestions": {"get": USER},
    "inbox-suggestions-accept-all": {"post": USER},
    "invitation-accept": {"post": USER},
    "organization-settings": {"get": USER, "put": USER},
    "queue-metrics": {"get": STAFF},
    "message-feedback": {"post": AUTHOR},
    "message-evaluation-question": {"post": EDIT},  # a rated answer of the folder into one of its sets
    "answer-continue": {"post": AUTHOR},
    "run-cancel": {"post": AUTHOR},
    "run-detail": {"get": AUTHOR},
    "run-events": {"get": AUTHOR},
    "usage": {"get": USER},  # the caller's own model usage; `user=` is staff only
    "quota": {"get": USER},  # the caller's own limits and what their folders hold
    "tokens": {"get": USER, "post": USER},
    "token-detail": {"delete": AUTHOR},
}

CHECKED = [route for route in ROUTES if route.name not in PUBLIC]


def test_every_route_and_method_has_an_expected_row():
    missing = [
        (route.name, method) for route in CHECKED for method in route.methods if method not in RULES.get(route.name, {})
    ]
    assert missing == [], "add these to RULES with the least role they need"
    assert set(RULES) == {route.name for route in CHECKED}, "RULES names a route that no longer exists"


def _expected(rule: str, role: str) -> str:
    if rule in (USER, VIEW):
        return "through"
    if rule == EDIT:
        return "through" if role == "editor" else "403"
    if rule == EDITORS:
        return "through" if role == "editor" else "404"
    if rule in (MANAGE, STAFF):
        return "403"
    return "404"  # AUTHOR


@pytest.mark.parametrize("role", ["viewer", "editor"])
@pytest.mark.parametrize("route", CHECKED, ids=lambda r: r.name)
def test_a_member_gets_what_the_role_allows(route, role, owned, django_user_model):
    member = django_user_model.objects.create_user(username=f"member-{role}")
    FolderMembership.objects.create(folder=owned.folder, user=member, role=role)
    url = reverse(route.name, kwargs=_kwargs(route.name, owned))
    for method in sorted(route.methods, key=lambda m: m == "delete"):
        response = _call(_client(member, route=route.name), method, url)
        body = b"" if response.streaming else response.content
        expected = _expected(RULES[route.name][method], role)
        assert response.status_code < 500, (method, url, response.status_code, body[:300])
        if expected == "through":
            assert response.status_code not in (401, 403, 404), (method, url, response.status_code, body[:300])
        else:
            assert response.status_code == int(expected), (method, url, role, response.status_code, body[:300])
        if expected == "403":
            assert b"Only " in body, body[:300]  # the refusal says who may
        if response.streaming:
            response.close()
