"""A folder's Evaluate pages: its evaluation sets, their runs and trend, live progress; and the
*Feedback* view of its rated answers, from which an answer's question joins a set.

Shells like the folder's other pages (`library_views`); their scripts read and write through the
evaluation API. Viewers get the sets and results without the controls the API would refuse them.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.web.library_views import _folder_context


@login_required
def folder_evaluate(request: HttpRequest, folder_id: int) -> HttpResponse:
    context = _folder_context(request, folder_id, "evaluate")
    context.update(agent_mode_enabled=settings.AGENT_MODE_ENABLED, models_allowed=settings.LLM_MODELS_ALLOWED)
    return render(request, "web/folder_evaluate.html", context)


@login_required
def folder_evaluate_feedback(request: HttpRequest, folder_id: int) -> HttpResponse:
    context = _folder_context(request, folder_id, "evaluate")
    context.update(agent_mode_enabled=settings.AGENT_MODE_ENABLED)
    return render(request, "web/folder_evaluate_feedback.html", context)
