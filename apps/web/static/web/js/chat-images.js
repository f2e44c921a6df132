// Images with a question: chosen in the composer (shown there, each removable), sent as multipart
// `images` with the question's fields, and shown as thumbnails in the question's bubble. The server
// checks the count, size and type, and its refusal is the status line's message.
import { h } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

export class ImagePicker {
  constructor(input, list) {
    this.input = input;
    this.list = list;
    this.chosen = []; // {file, name, url}: the url shows the file here and in the sent question
    input.addEventListener("change", () => {
      for (const file of input.files) this.chosen.push({ file, name: file.name, url: URL.createObjectURL(file) });
      input.value = ""; // choosing the same file again still adds it
      this.render();
    });
  }

  // The chat request's body: `fields` as they are (JSON), or a form carrying the images too.
  body(fields) {
    if (!this.chosen.length) return fields;
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (value !== null && value !== undefined && value !== "") form.append(name, String(value));
    }
    for (const { file, name } of this.chosen) form.append("images", file, name);
    return form;
  }

  // Taken by the question just sent: the composer starts empty again.
  take() {
    const taken = this.chosen;
    this.chosen = [];
    this.render();
    return taken;
  }

  render() {
    this.list.hidden = !this.chosen.length;
    this.list.replaceChildren(
      ...this.chosen.map((image) =>
        h(
          "li",
          { class: "chosen-image" },
          thumbnail(image),
          h(
            "button",
            {
              type: "button",
              class: "button quiet small",
              "aria-label": interpolate(gettext("Remove %(name)s"), { name: image.name }),
              onclick: () => {
                this.chosen = this.chosen.filter((other) => other !== image);
                this.render();
                this.input.focus();
              },
            },
            "×",
          ),
        ),
      ),
    );
  }
}

// A question's images ({name, url}: the API's `attachments`, or those just chosen), each opening whole.
export function questionImages(images) {
  return h(
    "ul",
    { class: "question-images", "aria-label": gettext("Attached images") },
    ...images.map((image) => h("li", {}, h("a", { href: image.url, target: "_blank", rel: "noopener" }, thumbnail(image)))),
  );
}

function thumbnail(image) {
  const picture = h("img", { src: image.url, alt: image.name, title: image.name, loading: "lazy" });
  // A format this browser cannot show (HEIC outside Safari) is named instead.
  picture.addEventListener("error", () => picture.replaceWith(h("span", { class: "image-name" }, image.name)), {
    once: true,
  });
  return picture;
}
