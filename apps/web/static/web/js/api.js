// The REST API, called with the session cookie; unsafe methods carry Django's CSRF token.
import { gettext, interpolate } from "./i18n.js";

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

// A form that really submits (logging out, say) navigates away; an API call answered 401 while
// that navigation is under way must not replace it with a trip to the login page.
let leaving = false;
document.addEventListener("submit", (event) => {
  if (!event.defaultPrevented) leaving = true;
});

function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]').content;
}

// `body`: an object sent as JSON, or a FormData sent as multipart (the browser sets its boundary).
export async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined || form ? body : JSON.stringify(body),
  });
  if (response.status === 401 && !leaving) {
    // The session expired: come back here after logging in again.
    window.location.assign(`/login/?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, errorMessage(response.status, data), data);
  return data;
}

// List endpoints are paginated ({count, results}); a few may answer a bare array.
export function results(data) {
  return Array.isArray(data) ? data : (data?.results ?? []);
}

// Errors are {"detail": "...", "errors": {field: [messages]}}: show both, readably.
function errorMessage(status, data) {
  const parts = [];
  const fieldErrors = data?.errors ?? {};
  // The generic detail of a refusal that names its fields says nothing the fields do not.
  if (data?.detail && !(data.detail === gettext("Invalid input.") && Object.keys(fieldErrors).length)) parts.push(data.detail);
  for (const [name, messages] of Object.entries(fieldErrors)) {
    const text = [].concat(messages).join(" ");
    parts.push(name === "non_field_errors" ? text : `${name.replaceAll("_", " ")}: ${text}`);
  }
  return parts.join(" ") || interpolate(gettext("The server answered %(status)s."), { status });
}
