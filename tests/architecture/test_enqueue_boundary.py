"""Services reach tasks only by name: no module under apps/ imports workers/ (at the top or inside a
function), so the tasks, which import the services they run, close no circle; and every name an
app's enqueue module sends is a task that workers/ declares. Read from the source with ast: nothing
is imported to check it."""

from __future__ import annotations

import ast
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]


def _modules(folder: str) -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(BASE_DIR).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for path in sorted((BASE_DIR / folder).rglob("*.py"))
    ]


def _imported(tree: ast.Module) -> list[tuple[int, str]]:
    """Every module an import statement names, wherever it stands (functions and classes too)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module)]
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _is_workers(module: str) -> bool:
    return module == "workers" or module.startswith("workers.")


def test_no_module_under_apps_imports_workers() -> None:
    offenders = sorted(
        {
            f"{path}:{line} imports {module}"
            for path, tree in _modules("apps")
            for line, module in _imported(tree)
            if _is_workers(module)
        }
    )
    assert offenders == [], "send the task by name through the app's enqueue module instead:\n" + "\n".join(offenders)


def test_the_check_sees_imports_inside_functions() -> None:
    hidden = ast.parse("def enqueue():\n    from workers.sync import sync_folder\n    import workers.agent\n")
    assert [module for _, module in _imported(hidden) if _is_workers(module)] == [
        "workers.sync",
        "workers.sync.sync_folder",
        "workers.agent",
    ]


def _declared_tasks() -> set[str]:
    """The names given to ``@shared_task(name=...)`` in workers/."""
    names = set()
    for _, tree in _modules("workers"):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "shared_task":
                names |= {
                    str(keyword.value.value)
                    for keyword in node.keywords
                    if keyword.arg == "name" and isinstance(keyword.value, ast.Constant)
                }
    return names


def _sent_names() -> dict[str, str]:
    """Task name -> the enqueue module that sends it (the first argument of each ``task_send``)."""
    sent = {}
    for path, tree in _modules("apps"):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "task_send":
                first = node.args[0]
                assert isinstance(first, ast.Constant), f"{path}:{node.lineno}: a task name not written out"
                sent[str(first.value)] = path
    return sent


def test_every_task_an_app_sends_is_declared_in_workers_and_only_enqueue_modules_send() -> None:
    sent, declared = _sent_names(), _declared_tasks()
    assert sent, "no task_send found: the check reads nothing"
    assert {name: path for name, path in sent.items() if name not in declared} == {}
    assert {path for path in sent.values() if not path.endswith("/enqueue.py")} == set()
