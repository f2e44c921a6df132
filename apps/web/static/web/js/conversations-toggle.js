// Narrow screens (CSS: max-width 860px) show the chat page's conversation list as a panel over the
// page, opened and closed by its toggle; Escape or a click outside closes it, focus going back to
// the toggle. Wider screens show the list beside the chat and never see the toggle.
const layout = document.getElementById("chat");
const toggle = document.getElementById("conversations-toggle");
const panel = document.getElementById(toggle.getAttribute("aria-controls"));

function isOpen() {
  return toggle.getAttribute("aria-expanded") === "true";
}

function setOpen(open, { returnFocus = false } = {}) {
  layout.classList.toggle("conversations-open", open);
  toggle.setAttribute("aria-expanded", String(open));
  // The panel comes before the chat in the page: focus moves into it, or Tab would skip it.
  if (open) panel.querySelector("a[href], button")?.focus();
  else if (returnFocus) toggle.focus();
}

toggle.addEventListener("click", () => setOpen(!isOpen()));

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && isOpen()) setOpen(false, { returnFocus: true });
});

document.addEventListener("click", (event) => {
  if (isOpen() && !panel.contains(event.target) && !toggle.contains(event.target)) setOpen(false);
});
