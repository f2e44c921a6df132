// Tiny DOM helpers: markup lives in <template> elements; scripts clone and fill them with text,
// never with HTML, so file names and answers cannot inject markup.

export function clone(templateId) {
  return document.getElementById(templateId).content.firstElementChild.cloneNode(true);
}

export function field(root, name) {
  return root.querySelector(`[data-field="${name}"]`);
}

export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") element.className = value;
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value);
  }
  element.append(...children.filter((child) => child !== null && child !== undefined));
  return element;
}

// A run's status line (chat and inbox): its text, and classes saying whether work goes on or failed.
export function statusSetter(element) {
  return (text, { working = false, failed = false } = {}) => {
    element.textContent = text;
    element.classList.toggle("working", working);
    element.classList.toggle("failed", failed);
  };
}

// Enter sends the message box's form; Shift+Enter, or Enter while an IME composes, is a new line.
export function sendOnEnter(box, form) {
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
}
