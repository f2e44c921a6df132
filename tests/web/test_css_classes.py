"""Every class the templates and scripts set has a rule in some stylesheet (issue 41): a class that
nothing styles is dead, or misses its styles (as the Share dialog's `.drawer` once did). And since
the styles come in parts, each page links the parts that style the classes it and its scripts set.

Classes are read as written. Templates: the words of each class="..." (every {% if %} branch's
literal words; a word built from a {{ expression }} is skipped) and the body_class blocks. Scripts:
the class given to h(tag, {class: ...}), className, setAttribute("class", ...), classList.add,
toggle and replace, and class="..." inside strings: the string literals there. Stylesheets: every
class named in a selector (inside @media and :not() too), parsed with tinycss2.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import tinycss2

from tests.support.servers import BASE_DIR

APPS = BASE_DIR / "apps"
TEMPLATE_DIRS = [*APPS.glob("*/templates"), BASE_DIR / "config" / "templates"]
# Django admin's pages wear the admin's own stylesheet and classes.
ADMIN_TEMPLATES = "templates/admin/"
STATIC = APPS / "web" / "static"
# Helpers that set classes on the elements their callers hand them (dom.js's statusSetter: working,
# failed): which pages need those classes styled follows from the callers, not from an import.
SHARED_HELPERS = {"web/js/dom.js"}

# Classes only found by, never styled: each names the element for the scripts or the tests, and the
# element's other classes (or the card, bubble or list inside it) carry its look.
HOOKS = {
    # message-view.js and the chat tests find a conversation's items, and the assistant's among them.
    "message": "chat and inbox items, found by the tests",
    "message-agent": "the assistant's items (the user's are .message-user, styled)",
    # The inbox feed's kinds of item, found by inbox.js (a decided suggestion) and the inbox tests.
    "feed-item": "any item of the inbox feed",
    "suggestion-item": "a suggestion, found by inbox.js when it is decided",
    "result-item": "a found-files answer, found by inbox-cards.js to refresh its cards",
    "clarification-item": "a clarifying question",
    "move-item": "a move's outcome",
    "result-card": "a found file's card (a .card), found by inbox-cards.js when its file moves",
    # answer-notes.js removes an answer's earlier notes by it before it adds the new ones.
    "answer-note": "each note's other class styles it",
}

CLASS_ATTRIBUTE = re.compile(r"""\bclass=(["'])(.*?)\1""", re.S)
BODY_CLASS = re.compile(r"{%\s*block body_class\s*%}(.*?){%\s*endblock", re.S)
TEMPLATE_TAG = re.compile(r"{%.*?%}|{#.*?#}", re.S)
TEMPLATE_VARIABLE = re.compile(r"{{.*?}}", re.S)
STRING = re.compile(r""""([^"\\\n]*)"|'([^'\\\n]*)'|`([^`$\\]*)`""")
# What follows `class:` (h()'s props), `className =`/`className:` or setAttribute("class", up to the
# end of the value; a conditional's branches are literals in it.
SCRIPT_CLASS_VALUE = re.compile(r"""(?:\bclass(?:Name)?\s*[:=]|setAttribute\(\s*["']class["']\s*,)\s*([^,;}\n)]+)""")
CLASS_LIST = re.compile(r"""classList\.(add|toggle|replace)\(([^)]*)\)""")
EXTENDS = re.compile(r"""{%\s*extends\s+["']([^"']+)["']""")
INCLUDE = re.compile(r"""{%\s*include\s+["']([^"']+)["']""")
STATIC_FILE = re.compile(r"""{%\s*static\s+["']([^"']+\.(?:css|js))["']""")
IMPORT = re.compile(r"""\bfrom\s+["']\./([^"']+\.js)["']""")


def words(literals: Iterable[str]) -> set[str]:
    return {word for literal in literals for word in literal.split()}


def strings(code: str) -> list[str]:
    return ["".join(part or "" for part in match.groups()) for match in STRING.finditer(code)]


def class_names(expression: str) -> set[str]:
    """The classes an expression can give: its literals, or a conditional's branches' (not the
    condition's: `role === "user" ? "message-user" : "message-agent"`)."""
    return words(strings(expression.split("?", 1)[1] if "?" in expression else expression))


def template_classes(text: str) -> set[str]:
    found: set[str] = set()
    for value in [match.group(2) for match in CLASS_ATTRIBUTE.finditer(text)] + BODY_CLASS.findall(text):
        # An expression glues to the letters around it ("notice-{}"), so such a word is skipped whole.
        literal = TEMPLATE_VARIABLE.sub("{}", TEMPLATE_TAG.sub(" ", value))
        found |= {word for word in literal.split() if "{" not in word and "}" not in word}
    return found


def script_classes(code: str) -> set[str]:
    found = {name for match in SCRIPT_CLASS_VALUE.finditer(code) for name in class_names(match.group(1))}
    for method, arguments in CLASS_LIST.findall(code):
        given = arguments.split(",")
        # toggle(name, on) and replace(old, new) set one class; add(...) sets every one it names.
        chosen = {"add": given, "toggle": given[:1], "replace": given[1:2]}[method]
        found |= {name for argument in chosen for name in class_names(argument)}
    return found | template_classes(code)


def selector_classes(tokens: Iterable[tinycss2.ast.Node]) -> Iterator[str]:
    previous = None
    for token in tokens:
        if token.type == "ident" and previous is not None and previous.type == "literal" and previous.value == ".":
            yield token.value
        if token.type == "function":  # :not(.x), :is(.x), :has(.x)
            yield from selector_classes(token.arguments)
        previous = token


def stylesheet_classes(text: str) -> set[str]:
    found: set[str] = set()
    rules = list(tinycss2.parse_stylesheet(text, skip_comments=True, skip_whitespace=True))
    while rules:
        rule = rules.pop()
        if rule.type == "qualified-rule":
            found |= set(selector_classes(rule.prelude))
        elif rule.type == "at-rule" and rule.content is not None and rule.lower_at_keyword != "keyframes":
            rules += tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True)
    return found


def templates() -> list[Path]:
    return [
        path
        for directory in TEMPLATE_DIRS
        for path in directory.glob("**/*.html")
        if ADMIN_TEMPLATES not in path.as_posix()
    ]


def template_named(name: str) -> Path:
    return next(directory / name for directory in TEMPLATE_DIRS if (directory / name).is_file())


def classes_in_use() -> dict[str, set[str]]:
    """Each class set by a template or script, with the files that set it."""
    where: dict[str, set[str]] = {}
    for path in templates():
        for name in template_classes(path.read_text()):
            where.setdefault(name, set()).add(str(path.relative_to(BASE_DIR)))
    for path in APPS.glob("*/static/**/*.js"):
        for name in script_classes(path.read_text()):
            where.setdefault(name, set()).add(str(path.relative_to(BASE_DIR)))
    return where


def styled_classes() -> set[str]:
    return {name for path in APPS.glob("*/static/**/*.css") for name in stylesheet_classes(path.read_text())}


def page_parts(path: Path) -> tuple[set[str], set[str]]:
    """A page's classes (its own, its includes' and its scripts', with what they import) and the
    classes its stylesheets style (its own links and its parents')."""
    classes: set[str] = set()
    links: set[str] = set()
    scripts: list[str] = []
    todo, seen = [path], set()
    while todo:
        template = todo.pop()
        if template in seen:
            continue
        seen.add(template)
        text = template.read_text()
        classes |= template_classes(text)
        for static in STATIC_FILE.findall(text):
            (links.add if static.endswith(".css") else scripts.append)(static)
        todo += [template_named(name) for name in EXTENDS.findall(text) + INCLUDE.findall(text)]
    loaded: set[str] = set()
    while scripts:
        script = scripts.pop()
        if script not in loaded:
            loaded.add(script)
            code = (STATIC / script).read_text()
            classes |= set() if script in SHARED_HELPERS else script_classes(code)
            scripts += [str(Path(script).parent / module) for module in IMPORT.findall(code)]
    styled = {name for link in links for name in stylesheet_classes((STATIC / link).read_text())}
    return classes, styled


def test_every_class_set_by_a_template_or_script_has_a_rule() -> None:
    used, styled = classes_in_use(), styled_classes()
    unstyled = {name: sorted(files) for name, files in used.items() if name not in styled and name not in HOOKS}
    assert not unstyled, "classes set but styled by no stylesheet (add a rule, drop the class, or list a hook):\n" + (
        "\n".join(f"  .{name}: {', '.join(files)}" for name, files in sorted(unstyled.items()))
    )


def test_every_page_links_the_stylesheets_its_classes_need() -> None:
    """A page is a template that extends another or is a whole document; the test above names a
    class no stylesheet styles, this one a page that does not link the part that does."""
    styled_anywhere = styled_classes()
    missing = {}
    for path in templates():
        text = path.read_text()
        if not (EXTENDS.search(text) or "<html" in text):
            continue
        classes, styled = page_parts(path)
        unlinked = sorted(classes & styled_anywhere - styled)
        if unlinked:
            missing[str(path.relative_to(BASE_DIR))] = unlinked
    assert not missing, "pages that do not link the styles of these classes:\n" + "\n".join(
        f"  {page}: {', '.join(names)}" for page, names in sorted(missing.items())
    )


def test_every_hook_is_still_set_and_still_unstyled() -> None:
    used, styled = classes_in_use(), styled_classes()
    assert not set(HOOKS) - set(used), "hooks nothing sets any more: drop them from HOOKS"
    assert not set(HOOKS) & styled, "hooks with a rule now: drop them from HOOKS"


def test_the_readers_see_what_they_must() -> None:
    """The readers on small samples: every form the files use, and what they must skip."""
    template = """<li class="card {% if done %}decided{% else %}open{% endif %} notice-{{ kind }} x{{ n }}y">
    {% block body_class %}page-chat{% endblock %}<p class='muted'>"""
    assert template_classes(template) == {"card", "decided", "open", "muted", "page-chat"}
    script = """h("li", { class: removed ? "chip chip-removed" : "chip", href });
    h("input", {
      class: "tree-search",
    });
    item.classList.add("one", "two"); item.classList.toggle("open", shown); item.classList.replace("a", "b");
    item.classList.add(role === "user" ? "mine" : "theirs");
    item.classList.remove("gone"); if (item.classList.contains("asked")) {}
    row.className = "row"; Object.assign(time, { className: "time" }); box.setAttribute("class", "boxed");
    list.innerHTML = `<span class="inline">`; const glyph = kind; h("span", { class: glyph });"""
    assert script_classes(script) == {
        *("chip", "chip-removed", "tree-search", "one", "two", "open", "b", "mine", "theirs", "row", "time"),
        *("boxed", "inline"),
    }
    css = """@media (max-width: 10px) { .a .b, .c:not(.d)::before { x: 1 } }
    .e.f > g[data-x=".h"] { margin: 0.5rem } @keyframes spin { to { y: 1 } }"""
    assert stylesheet_classes(css) == {"a", "b", "c", "d", "e", "f"}
