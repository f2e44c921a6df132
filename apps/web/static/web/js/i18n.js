// The scripts' strings in the page's language. Django's JavaScript catalog (/jsi18n/, a deferred
// script base.html loads before any module) defines window.gettext and window.ngettext; without it
// (a page that does not load it, a module tried on its own) the English source strings are shown.
// `manage.py makemessages -d djangojs` finds the strings in gettext(), ngettext() and pgettext()
// calls: only string literals there, never template literals (README "Languages").

const catalog = globalThis;

// The page's language (<html lang>, set from the active language), for Intl's formats.
export const language = document.documentElement.lang || "en";

export function gettext(text) {
  return typeof catalog.gettext === "function" ? catalog.gettext(text) : text;
}

export function ngettext(singular, plural, count) {
  if (typeof catalog.ngettext === "function") return catalog.ngettext(singular, plural, count);
  return count === 1 ? singular : plural;
}

// A word that means several things in English ("B" the byte), told apart by its context.
export function pgettext(context, text) {
  return typeof catalog.pgettext === "function" ? catalog.pgettext(context, text) : text;
}

// "Moved to %(folder)s." with { folder: "taxes/" }: named placeholders, so a translation may put
// them in any order; "%%" is a percent sign. A number is written the page language's way ("1.234"
// in German).
export function interpolate(text, values) {
  return text.replace(/%\((\w+)\)s|%%/g, (placeholder, name) => {
    if (name === undefined) return "%";
    if (!(name in values)) return placeholder;
    const value = values[name];
    return typeof value === "number" ? formatNumber(value) : String(value);
  });
}

const numbers = new Intl.NumberFormat(language);

export function formatNumber(value, options) {
  return options ? new Intl.NumberFormat(language, options).format(value) : numbers.format(value);
}
