// filters.js: which entries the list shows. Pure (no DOM), tested in Tests/InspectorJS/filters.test.mjs.
//
// A filter is a plain object; empty fields let everything through:
//   { source: 'miss', status: '4xx', method: 'POST', host: 'api', text: 'users -health', bodyMatches: Set|null }
// `text` is split on spaces; every word must occur in the entry's method, URL, status or source (case
// insensitive), and a word starting with '-' must not. `bodyMatches`, when set, holds the ids that a body search
// found; only those pass.

import { hostOf, statusClass } from './format.js';

/** A filter that lets everything through. */
export function emptyFilter() {
  return { source: '', status: '', method: '', host: '', text: '', bodyMatches: null };
}

/** Whether `filter` narrows anything (the page shows "n of m" when it does). */
export function isActive(filter) {
  return Boolean(
    filter.source || filter.status || filter.method || filter.host || filter.text.trim() || filter.bodyMatches,
  );
}

/** Splits the free text into the words to find and the words to exclude, lowercased. */
export function parseText(text) {
  const include = [];
  const exclude = [];
  for (const word of String(text ?? '').toLowerCase().split(/\s+/)) {
    if (word === '' || word === '-') continue;
    if (word.startsWith('-')) exclude.push(word.slice(1));
    else include.push(word);
  }
  return { include, exclude };
}

/**
 * A predicate for `filter`, compiled once so that checking ten thousand entries does no parsing per entry.
 * Entries are the events' objects ({id, method, url, host, status, source, ...}).
 */
export function compileFilter(filter) {
  const source = filter.source || '';
  const status = filter.status || '';
  const method = (filter.method || '').toUpperCase();
  const host = (filter.host || '').trim().toLowerCase();
  const { include, exclude } = parseText(filter.text);
  const bodyMatches = filter.bodyMatches || null;
  return (entry) => {
    if (!entry) return false;
    if (source && entry.source !== source) return false;
    if (status && statusClass(entry.status) !== status) return false;
    if (method && String(entry.method).toUpperCase() !== method) return false;
    if (host && !hostOf(entry).toLowerCase().includes(host)) return false;
    if (bodyMatches && !bodyMatches.has(entry.id)) return false;
    if (include.length === 0 && exclude.length === 0) return true;
    const haystack = searchText(entry);
    for (const word of include) if (!haystack.includes(word)) return false;
    for (const word of exclude) if (haystack.includes(word)) return false;
    return true;
  };
}

/** What the free text looks in, lowercased; cached on the entry because entries never change. */
export function searchText(entry) {
  let text = entry.__search;
  if (text === undefined) {
    text = `${entry.method ?? ''} ${entry.url ?? ''} ${entry.status ?? ''} ${entry.source ?? ''}`.toLowerCase();
    Object.defineProperty(entry, '__search', { value: text, enumerable: false });
  }
  return text;
}

/**
 * Whether a request's detail (GET /__kakapo/requests/{id}) holds `query` in its request or response body
 * (or a WebSocket message or a stream chunk). Text bodies are searched case-insensitively; base64 bodies are
 * decoded and searched byte for byte (the query as UTF-8), so a token inside a binary body is found too.
 */
export function detailBodyMatches(detail, query) {
  const needle = String(query ?? '').toLowerCase();
  if (needle === '' || !detail || typeof detail !== 'object') return false;
  const bodies = [detail.request?.body, detail.response?.body];
  for (const body of bodies) if (bodyMatches(body, needle)) return true;
  for (const chunk of arrayOr(detail.response?.chunks)) {
    if (typeof chunk?.text === 'string' && chunk.text.toLowerCase().includes(needle)) return true;
  }
  for (const message of arrayOr(detail.webSocket?.messages)) {
    if (typeof message?.text === 'string' && message.text.toLowerCase().includes(needle)) return true;
  }
  return false;
}

function arrayOr(value) {
  return Array.isArray(value) ? value : [];
}

function bodyMatches(body, needle) {
  if (!body || typeof body !== 'object') return false;
  if (typeof body.text === 'string') return body.text.toLowerCase().includes(needle);
  if (typeof body.base64 === 'string') {
    const bytes = decodeBase64(body.base64);
    if (!bytes) return false;
    return bytesInclude(bytes, new TextEncoder().encode(needle));
  }
  return false;
}

/** The bytes of a base64 string; null when it is not base64. */
export function decodeBase64(text) {
  if (typeof text !== 'string') return null;
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
    return bytes;
  } catch {
    return null;
  }
}

// ASCII letters compare without case (the needle is lowercased already); other bytes exactly.
function lower(byte) {
  return byte >= 65 && byte <= 90 ? byte + 32 : byte;
}

function bytesInclude(haystack, needle) {
  if (needle.length === 0) return true;
  const last = haystack.length - needle.length;
  outer: for (let start = 0; start <= last; start += 1) {
    for (let offset = 0; offset < needle.length; offset += 1) {
      if (lower(haystack[start + offset]) !== needle[offset]) continue outer;
    }
    return true;
  }
  return false;
}

/** The status classes the status filter offers, in order. */
export const STATUS_CLASSES = Object.freeze(['1xx', '2xx', '3xx', '4xx', '5xx', 'fault']);

/** Methods the method filter always offers; methods seen in the list are added to these. */
export const COMMON_METHODS = Object.freeze(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
