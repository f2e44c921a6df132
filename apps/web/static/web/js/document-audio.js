// A recording's document page: each passage of the transcript offers to play the original from its
// time (the chunk's location.time, in seconds); the cited passage's time is where the player starts
// (a #t= fragment on its src, set by the page).
import { h } from "./dom.js";
import { clockTime } from "./file-format.js";

const audio = document.getElementById("audio-view");

// A button that plays the recording from the chunk's time; null for a file that is no recording.
export function playButton(chunk) {
  const seconds = chunk.location?.time;
  if (!audio || !Number.isInteger(seconds)) return null;
  return h(
    "button",
    {
      type: "button",
      class: "button small quiet chunk-play",
      "aria-label": `Play from ${clockTime(seconds)}`,
      onclick: () => {
        audio.currentTime = seconds;
        audio.play().catch(() => {}); // a browser may refuse to play; the player is at the time anyway
      },
    },
    "▶ Play",
  );
}
