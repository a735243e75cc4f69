// api.js: every request the page makes to Kakapo's admin API. With --admin-token, the token is asked for once
// (the page's token dialog) and kept in sessionStorage for this tab, then sent as a Bearer token on each call.
// Admin requests never show up in the inspector's own list: the server leaves them out of the journal.

const TOKEN_KEY = 'kakapo.inspector.token';

let askToken = async () => null;
let pendingAsk = null;
// The token when sessionStorage refuses to keep it.
let memoryToken = '';
// Whether the person cancelled the token dialog.
let declined = false;

/** Sets how the page asks for a token after a 401: a function resolving to the token, or null if refused. */
export function setTokenPrompt(ask) {
  askToken = ask;
}

/** The token kept for this tab, or "". */
export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return '';
  }
}

/** Keeps `value` as this tab's token ("" forgets it). */
export function setToken(value) {
  try {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage can be disabled (a private window's policy); the token then lasts until the page reloads.
  }
  memoryToken = value || '';
}

/** The headers every admin call carries. */
export function authHeaders(extra = {}) {
  const headers = { ...extra };
  const value = token() || memoryToken;
  if (value) headers.Authorization = `Bearer ${value}`;
  return headers;
}

/**
 * Asks for a token once, however many calls were refused at the same time. After the person cancels, later
 * refusals do not ask again (a page full of prompts is no help) until `force` says they asked to sign in.
 */
export async function requestToken(reason, { force = false } = {}) {
  if (declined && !force) return null;
  if (!pendingAsk) {
    pendingAsk = Promise.resolve(askToken(reason)).finally(() => {
      pendingAsk = null;
    });
  }
  const value = await pendingAsk;
  declined = !value;
  if (value) setToken(value);
  return value;
}

/** An admin API error: `status` (0 when the server could not be reached) and the server's message. */
export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/**
 * Calls the admin API and returns `{status, body}` with the JSON body parsed (null when there is none).
 * A 401 asks for the token and tries again; other statuses are returned, not thrown, because a 404 or 409 is
 * an answer the page shows. Throws ApiError when the server cannot be reached or the token is refused.
 */
export async function call(path, { method = 'GET', body, signal } = {}) {
  for (let attempt = 0; attempt < 4; attempt += 1) {
    const init = { method, headers: authHeaders(), signal, cache: 'no-store', credentials: 'omit' };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (error) {
      if (error?.name === 'AbortError') throw error;
      throw new ApiError(0, 'Kakapo cannot be reached (is it still running?)', null);
    }
    if (response.status === 401) {
      const value = await requestToken('This Kakapo asks for its admin token (--admin-token).');
      if (!value) throw new ApiError(401, 'no admin token given', null);
      continue;
    }
    const text = await response.text();
    let parsed = null;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { error: text.slice(0, 2000) };
      }
    }
    return { status: response.status, body: parsed };
  }
  throw new ApiError(401, 'the admin token was refused', null);
}

/** GET that expects 200: the body, or throws ApiError with the server's error message. */
export async function getJSON(path, options = {}) {
  const { status, body } = await call(path, options);
  if (status !== 200) throw new ApiError(status, errorMessage(status, body), body);
  return body;
}

/** The message of an error body ({"error": "..."}, or a miss's {"error": {"message": "..."}}), or a generic
 * one naming the status. */
export function errorMessage(status, body) {
  if (body && typeof body.error === 'string') return body.error;
  if (body && typeof body.error?.message === 'string') return body.error.message;
  return `Kakapo answered ${status}`;
}
