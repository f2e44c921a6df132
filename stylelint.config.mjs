// `make lint` checks every stylesheet under apps/ with stylelint's standard rules: syntax errors (an
// unclosed block), unknown properties, selectors and units, duplicate selectors, a rule that a later,
// less specific one would override in the same file, and one consistent spelling.
export default {
  extends: ["stylelint-config-standard"],
  rules: {
    // `(max-width: 860px)`, not `(width <= 860px)`: the range form needs Safari 16.4 or later.
    "media-feature-range-notation": "prefix",
    // The visually-hidden pattern's `clip: rect(0 0 0 0)` stays: deprecated, yet every browser honours it,
    // and `clip-path` in its place moved a few anti-aliased pixels of the pages around it.
    "property-no-deprecated": [true, { ignoreProperties: ["clip"] }],
  },
};
