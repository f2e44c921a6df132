// A recording's document page: each passage of the transcript offers to play the original from its
// time (the chunk's location.time, in seconds); the cited passage's time is where the player starts
// (a #t= fragment on its src, set by the page).
import { h } from "./dom.js";
import { clockTime } from "./file-format.js";
import { gettext, interpolate } from "./i18n.js";

const audio = document.getElementById("audio-view");
const SVG = "http://www.w3.org/2000/svg";

// A button that plays the recording from the chunk's time; null for a file that is no recording.
export function playButton(chunk) {
  const seconds = chunk.location?.time;
  if (!audio || !Number.isInteger(seconds)) return null;
  return h(
    "button",
    {
      type: "button",
      class: "button small quiet chunk-play",
      "aria-label": interpolate(gettext("Play from %(time)s"), { time: clockTime(seconds) }),
      onclick: () => {
        audio.currentTime = seconds;
        audio.play().catch(() => {}); // a browser may refuse to play; the player is at the time anyway
      },
    },
    playIcon(),
    gettext("Play"),
  );
}

// A triangle drawn as SVG, not the ▶ glyph, which some systems draw as an emoji or an empty box.
function playIcon() {
  const svg = document.createElementNS(SVG, "svg");
  const attributes = { class: "icon-inline", viewBox: "0 0 24 24", width: "14", height: "14", "aria-hidden": "true" };
  for (const [name, value] of Object.entries(attributes)) svg.setAttribute(name, value);
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", "M7 4.5v15l12-7.5z");
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}
