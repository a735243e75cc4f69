// body-view.js: one body as the detail pane shows it (BODY on the wire: {size, kept, truncated, text|base64}).
// JSON is pretty and collapsible (json-view.js), images are shown from a blob: URL (the CSP allows blob: images;
// an SVG in an <img> runs no script), other text is shown as text, other bytes as a hex dump with their size.
// hexDump is pure and tested in Tests/InspectorJS/body-view.test.mjs.

import { decodeBase64 } from './filters.js';
import { formatByteCount, formatBytes } from './format.js';
import { looksLikeJSON, parseJSON, prettyText, renderJSON } from './json-view.js';

/** Hex dump rows shown at first; more are added a page at a time. */
export const HEX_ROWS = 256;

/** The text shown at first for a long text body (characters); the rest on request. */
export const TEXT_LIMIT = 200_000;

/** One line of a hex dump: "00000010  48 65 6c 6c 6f 20 77 6f  72 6c 64 0a 00 01 02 03  |Hello world.....|". */
export function hexLine(bytes, offset) {
  const hex = [];
  let ascii = '';
  for (let index = 0; index < 16; index += 1) {
    const position = offset + index;
    if (position < bytes.length) {
      const byte = bytes[position];
      hex.push(byte.toString(16).padStart(2, '0'));
      ascii += byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.';
    } else {
      hex.push('  ');
    }
    if (index === 7) hex.push('');
  }
  return `${offset.toString(16).padStart(8, '0')}  ${hex.join(' ')}  |${ascii}|`;
}

/** Rows `from..<from+count` of the hex dump of `bytes`, as lines. */
export function hexDump(bytes, from = 0, count = HEX_ROWS) {
  const lines = [];
  const rows = Math.ceil(bytes.length / 16);
  for (let row = Math.max(0, from); row < Math.min(rows, from + count); row += 1) lines.push(hexLine(bytes, row * 16));
  return lines;
}

/** The image content types shown as images. */
const IMAGE_TYPES = new Set([
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'image/svg+xml', 'image/x-icon',
  'image/vnd.microsoft.icon',
]);

/** The content type of a header list ([[name, value]]), or "". */
export function contentTypeOf(headers) {
  if (!Array.isArray(headers)) return '';
  for (const pair of headers) {
    if (Array.isArray(pair) && String(pair[0]).toLowerCase() === 'content-type') return String(pair[1] ?? '');
  }
  return '';
}

/**
 * The view of `body` (null/undefined: no body). `contentType` picks JSON or image views; `marks` (JSON pointer
 * -> title) marks differing fields in a JSON body; `onRelease` collects blob: URLs to revoke when the view goes.
 */
export function renderBody(body, contentType, { marks = new Map(), release = [] } = {}) {
  const box = document.createElement('div');
  box.className = 'body';
  if (!body || typeof body !== 'object' || (body.size === 0 && !body.text && !body.base64)) {
    box.append(note('no body'));
    return box;
  }
  const meta = document.createElement('div');
  meta.className = 'body-meta';
  const size = Number.isFinite(body.size) ? body.size : null;
  meta.textContent = size === null ? 'size unknown' : `${formatBytes(size)} (${formatByteCount(size)})`;
  if (body.truncated) {
    const cut = document.createElement('span');
    cut.className = 'warning';
    cut.textContent = ` · only the first ${formatBytes(body.kept)} kept`;
    meta.append(cut);
  }
  if (contentType) meta.append(` · ${contentType}`);
  box.append(meta);

  const type = String(contentType ?? '').toLowerCase().split(';')[0].trim();
  if (typeof body.text === 'string') {
    if (looksLikeJSON(type, body.text)) {
      const parsed = parseJSON(body.text);
      if (parsed.ok) {
        box.append(jsonWithRaw(parsed.value, body.text, marks));
        return box;
      }
      if (!body.truncated) box.append(note(`not valid JSON (${parsed.error}); shown as text`));
    }
    box.append(textView(body.text));
    return box;
  }
  if (typeof body.base64 === 'string') {
    const bytes = decodeBase64(body.base64);
    if (!bytes) {
      box.append(note('the body could not be decoded'));
      return box;
    }
    if (IMAGE_TYPES.has(type) && !body.truncated) {
      const url = URL.createObjectURL(new Blob([bytes], { type }));
      release.push(url);
      const image = document.createElement('img');
      image.className = 'body-image';
      image.alt = `${type} image, ${formatByteCount(bytes.length)}`;
      image.src = url;
      image.addEventListener('load', () => {
        meta.append(` · ${image.naturalWidth} × ${image.naturalHeight}`);
      });
      image.addEventListener('error', () => {
        image.replaceWith(note('not a picture the browser can show'), hexView(bytes));
      });
      box.append(image);
      return box;
    }
    box.append(hexView(bytes));
    return box;
  }
  box.append(note('no body kept'));
  return box;
}

function note(text) {
  const element = document.createElement('div');
  element.className = 'note';
  element.textContent = text;
  return element;
}

function jsonWithRaw(value, raw, marks) {
  const wrapper = document.createElement('div');
  const bar = document.createElement('div');
  bar.className = 'body-tools';
  const toggle = document.createElement('button');
  toggle.type = 'button';
  toggle.className = 'small';
  toggle.textContent = 'Raw';
  toggle.setAttribute('aria-pressed', 'false');
  const expand = document.createElement('button');
  expand.type = 'button';
  expand.className = 'small';
  expand.textContent = 'Expand all';
  bar.append(toggle, expand);
  let tree = renderJSON(value, { marks });
  let rawView = null;
  toggle.addEventListener('click', () => {
    const showRaw = toggle.getAttribute('aria-pressed') !== 'true';
    toggle.setAttribute('aria-pressed', String(showRaw));
    toggle.textContent = showRaw ? 'Pretty' : 'Raw';
    if (showRaw) {
      rawView ??= textView(raw.length > TEXT_LIMIT ? raw : safePretty(value, raw));
      tree.replaceWith(rawView);
    } else {
      rawView.replaceWith(tree);
    }
    expand.hidden = showRaw;
  });
  expand.addEventListener('click', () => {
    const fresh = renderJSON(value, { marks, open: 64 });
    tree.replaceWith(fresh);
    tree = fresh;
  });
  wrapper.append(bar, tree);
  return wrapper;
}

function safePretty(value, raw) {
  try {
    return prettyText(value);
  } catch {
    return raw;
  }
}

function textView(text) {
  const pre = document.createElement('pre');
  pre.className = 'body-text';
  pre.tabIndex = 0;
  if (text.length <= TEXT_LIMIT) {
    pre.textContent = text;
    return pre;
  }
  pre.textContent = text.slice(0, TEXT_LIMIT);
  const wrapper = document.createElement('div');
  const more = document.createElement('button');
  more.type = 'button';
  more.className = 'small';
  more.textContent = `show the remaining ${(text.length - TEXT_LIMIT).toLocaleString('en-US')} characters`;
  more.addEventListener('click', () => {
    pre.textContent = text;
    more.remove();
  });
  wrapper.append(pre, more);
  return wrapper;
}

function hexView(bytes) {
  const wrapper = document.createElement('div');
  const pre = document.createElement('pre');
  pre.className = 'body-hex';
  pre.tabIndex = 0;
  let shown = 0;
  const rows = Math.ceil(bytes.length / 16);
  const more = document.createElement('button');
  more.type = 'button';
  more.className = 'small';
  const add = () => {
    const lines = hexDump(bytes, shown, HEX_ROWS * 4);
    shown += lines.length;
    pre.textContent += (pre.textContent ? '\n' : '') + lines.join('\n');
    if (shown >= rows) more.remove();
    else more.textContent = `show more (${formatBytes((rows - shown) * 16)} left)`;
  };
  more.addEventListener('click', add);
  const label = document.createElement('div');
  label.className = 'body-meta';
  label.textContent = `binary, ${formatByteCount(bytes.length)}`;
  wrapper.append(label, pre, more);
  add();
  return wrapper;
}
