// detail.js: the detail pane of one request (GET /__kakapo/requests/{id}): its summary and timings, the miss
// explanation, request and response headers and bodies, a recorded stream's chunks with their offsets, a
// WebSocket conversation's messages, "Copy as curl" and "Save to cassette". The section renderers are exported
// for the cassette view, which shows recorded interactions the same way.

import { call, errorMessage } from './api.js';
import { contentTypeOf, renderBody } from './body-view.js';
import { curlCommand } from './curl.js';
import { formatByteCount, formatBytes, formatDuration, formatTimestamp, SOURCES, truncate } from './format.js';
import { renderMiss } from './miss-view.js';

/** Sources whose exchange happened live and so can be saved into a cassette. */
export const LIVE_SOURCES = new Set(['upstream', 'passthrough']);

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A header list ([[name, value]]) as a two-column table, in wire order. */
export function renderHeaders(headers) {
  const list = Array.isArray(headers) ? headers : [];
  if (list.length === 0) return element('div', 'note', 'no headers');
  const table = element('table', 'headers');
  const body = table.createTBody();
  for (const pair of list) {
    if (!Array.isArray(pair)) continue;
    const row = body.insertRow();
    const name = element('th', '', truncate(String(pair[0] ?? ''), 200));
    name.scope = 'row';
    const value = element('td', '', truncate(String(pair[1] ?? ''), 16_000));
    if (String(pair[1] ?? '').includes('[REDACTED]')) value.classList.add('redacted');
    row.append(name, value);
  }
  return table;
}

function section(title, ...children) {
  const box = element('section', 'part');
  box.append(element('h3', '', title), ...children);
  return box;
}

/** The request part: its line, headers and body. */
export function renderRequest(request, release) {
  const line = element('div', 'request-line');
  line.append(element('span', 'method', String(request.method ?? '')), ' ', element('span', 'mono', truncate(String(request.url ?? request.target ?? ''), 8000)));
  return section(
    'Request', line, element('h4', '', 'Headers'), renderHeaders(request.headers), element('h4', '', 'Body'),
    renderBody(request.body, contentTypeOf(request.headers), { release }),
  );
}

/** The response part: status, headers, body, and a recorded stream's chunks. */
export function renderResponse(response, release) {
  const children = [];
  const status = element('div', 'request-line');
  status.append(element('span', `status s-${Math.floor((response.status ?? 0) / 100)}xx`, String(response.status ?? '—')));
  children.push(status, element('h4', '', 'Headers'), renderHeaders(response.headers));
  if (response.live) {
    children.push(element('h4', '', 'Body'), element('div', 'note', 'a live stream: its body went to the client and was not kept'));
  } else if (Array.isArray(response.chunks)) {
    children.push(element('h4', '', `Stream: ${response.chunks.length} chunks`), renderChunks(response.chunks));
  } else {
    children.push(element('h4', '', 'Body'), renderBody(response.body, contentTypeOf(response.headers), { release }));
  }
  return section('Response', ...children);
}

/** A recorded stream's chunks: when each went out (ms after the head), its size and its text. */
export function renderChunks(chunks) {
  const table = element('table', 'chunks');
  const head = table.createTHead().insertRow();
  for (const text of ['#', 'at', 'size', 'data']) head.append(element('th', '', text));
  const body = table.createTBody();
  const limit = Math.min(chunks.length, 2000);
  for (let index = 0; index < limit; index += 1) {
    const chunk = chunks[index] ?? {};
    const row = body.insertRow();
    row.append(
      element('td', 'num', String(index)), element('td', 'num', formatDuration(chunk.offsetMs)),
      element('td', 'num', formatBytes(chunk.size)),
      element('td', 'mono pre', typeof chunk.text === 'string' ? truncate(chunk.text, 4000) : typeof chunk.base64 === 'string' ? `(binary, ${formatByteCount(chunk.size)})` : ''),
    );
  }
  if (chunks.length > limit) {
    const row = body.insertRow();
    const cell = element('td', 'note', `${chunks.length - limit} more chunks not shown`);
    cell.colSpan = 4;
    row.append(cell);
  }
  return table;
}

/** A WebSocket conversation: each message with who sent it and when, then the close. */
export function renderWebSocket(conversation) {
  const messages = Array.isArray(conversation?.messages) ? conversation.messages : [];
  const table = element('table', 'chunks messages');
  const head = table.createTHead().insertRow();
  for (const text of ['from', 'at', 'message']) head.append(element('th', '', text));
  const body = table.createTBody();
  for (const message of messages.slice(0, 2000)) {
    const row = body.insertRow();
    const from = String(message?.from ?? '');
    row.className = from === 'client' ? 'from-client' : 'from-server';
    row.append(
      element('td', '', from === 'client' ? '\u2191 client' : '\u2193 server'), element('td', 'num', formatDuration(message?.offsetMs)),
      element('td', 'mono pre', typeof message?.text === 'string' ? truncate(message.text, 4000) : typeof message?.base64 === 'string' ? '(binary)' : ''),
    );
  }
  const children = [table];
  if (messages.length > 2000) children.push(element('div', 'note', `${messages.length - 2000} more messages not shown`));
  if (conversation?.close) children.push(element('div', 'note', `closed: ${truncate(JSON.stringify(conversation.close), 500)}`));
  return section(`WebSocket: ${messages.length} messages`, ...children);
}

function summaryGrid(pairs) {
  const list = element('dl', 'facts');
  for (const [name, value, className] of pairs) {
    if (value === undefined || value === null || value === '') continue;
    list.append(element('dt', '', name), element('dd', className ?? '', String(value)));
  }
  return list;
}

/**
 * The detail pane. `open(entry)` shows an entry at once from its event fields and fills in the rest when
 * /__kakapo/requests/{id} answers; `close()` hides it. `onClose` tells app.js (to move focus back).
 */
export class DetailPane {
  constructor(root, { onClose, onSaved }) {
    this.root = root;
    this.onClose = onClose;
    this.onSaved = onSaved;
    this.release = [];
    this.current = null;
    this.controller = null;
  }

  get isOpen() {
    return !this.root.hidden;
  }

  close() {
    this.controller?.abort();
    this.root.hidden = true;
    this.root.textContent = '';
    this.freeBlobs();
    this.current = null;
    this.onClose?.();
  }

  freeBlobs() {
    for (const url of this.release) URL.revokeObjectURL(url);
    this.release = [];
  }

  async open(entry) {
    this.controller?.abort();
    this.controller = new AbortController();
    const { signal } = this.controller;
    this.current = entry;
    this.root.hidden = false;
    this.render(entry, null, 'Loading the detail…', true);
    let detail = null;
    let problem = null;
    try {
      const { status, body } = await call(`/__kakapo/requests/${encodeURIComponent(entry.id)}`, { signal });
      if (status === 200 && body && typeof body === 'object') detail = body;
      else problem = status === 404 ? 'Kakapo no longer holds this request\u2019s detail (it keeps the latest 1000).' : errorMessage(status, body);
    } catch (error) {
      if (error?.name === 'AbortError') return;
      problem = error.message;
    }
    if (this.current !== entry) return;
    this.render(entry, detail, problem);
  }

  // While loading, the pane shows the event's fields and no actions: a "Copy as curl" clicked then would copy
  // a request without its headers and body.
  render(entry, detail, problem, loading = false) {
    this.freeBlobs();
    const data = detail ?? entry;
    const root = this.root;
    root.textContent = '';
    root.dataset.id = String(entry.id);

    const header = element('header', 'detail-head');
    const title = element('h2', 'detail-title');
    title.id = 'detail-title';
    title.append(element('span', 'method', truncate(String(data.method ?? ''), 16)), ' ', element('span', 'mono', truncate(String(data.url ?? ''), 2000)));
    const close = element('button', 'icon', '\u00d7');
    close.type = 'button';
    close.title = 'Close (Esc)';
    close.setAttribute('aria-label', 'Close the detail');
    close.dataset.testid = 'detail-close';
    close.addEventListener('click', () => this.close());
    header.append(title, close);

    const actions = element('div', 'actions');
    const copy = element('button', '', 'Copy as curl');
    copy.type = 'button';
    copy.dataset.testid = 'copy-curl';
    const curlBox = element('textarea', 'curl');
    curlBox.readOnly = true;
    curlBox.hidden = true;
    curlBox.rows = 4;
    curlBox.spellcheck = false;
    curlBox.dataset.testid = 'curl-command';
    curlBox.setAttribute('aria-label', 'curl command');
    const copied = element('span', 'muted');
    copied.setAttribute('role', 'status');
    copy.addEventListener('click', async () => {
      const command = curlCommand(data, document.documentElement.dataset.proxyOrigin || location.origin);
      curlBox.value = command;
      curlBox.hidden = false;
      curlBox.select();
      try {
        if (!navigator.clipboard) throw new Error('no clipboard');
        await navigator.clipboard.writeText(command);
        copied.textContent = 'Copied.';
      } catch {
        // The clipboard needs a secure context and permission; the box below holds the command either way.
        copied.textContent = 'Select the command below and copy it.';
      }
    });
    actions.append(copy);
    if (LIVE_SOURCES.has(data.source) || data.saved) actions.append(this.saveControls(entry, data, detail));
    actions.append(copied);

    root.append(header);
    if (!loading) root.append(actions, curlBox);
    if (problem) root.append(element('div', detail ? 'note' : 'notice', problem));

    const source = String(data.source ?? '');
    root.append(summaryGrid([
      ['Status', data.status || 'none (a fault)'],
      ['Source', `${source}${SOURCES[source] ? `: ${SOURCES[source]}` : ''}`],
      ['Time', formatTimestamp(data.time)],
      ['Duration', formatDuration(data.ms)],
      ['Request size', Number.isFinite(data.requestBytes) ? formatByteCount(data.requestBytes) : undefined],
      ['Response size', data.responseBytes === null ? 'unknown (a live stream)' : Number.isFinite(data.responseBytes) ? formatByteCount(data.responseBytes) : undefined],
      ['Content type', data.contentType],
      ['Session', data.session, 'mono'],
      ['Interaction', Number.isSafeInteger(data.interaction) ? `#${data.interaction}` : undefined],
      ['Kind', data.webSocket ? 'WebSocket' : data.stream ? 'stream' : undefined],
      ['Id', data.id],
    ]));
    if (!detail) return;
    if (detail.miss) root.append(renderMiss(detail, { release: this.release }));
    if (detail.request) root.append(renderRequest(detail.request, this.release));
    if (detail.response) root.append(renderResponse(detail.response, this.release));
    if (detail.webSocket) root.append(renderWebSocket(detail.webSocket));
    if (!detail.response && !detail.webSocket && source === 'error') {
      root.append(section('Response', element('div', 'note', 'Kakapo answered with a fault (no HTTP response).')));
    }
  }

  saveControls(entry, data, detail) {
    const box = element('span', 'save');
    const button = element('button', '', 'Save to cassette');
    button.type = 'button';
    button.dataset.testid = 'save-cassette';
    const result = element('span', 'save-result');
    result.dataset.testid = 'save-result';
    result.setAttribute('role', 'status');
    if (data.saved) {
      button.disabled = true;
      result.textContent = savedText(data.saved);
      result.classList.add('ok');
    } else if (detail && detail.canSave === false) {
      button.disabled = true;
      result.textContent = detail.cannotSave ? `Cannot save: ${detail.cannotSave}` : 'Cannot save this exchange.';
    } else if (!detail) {
      button.disabled = true;
    }
    button.addEventListener('click', async () => {
      button.disabled = true;
      result.className = 'save-result';
      result.textContent = 'Saving…';
      try {
        const { status, body } = await call(`/__kakapo/requests/${encodeURIComponent(entry.id)}/save`, { method: 'POST', body: {} });
        if (status === 201 || status === 200) {
          result.textContent = savedText(body ?? {});
          result.classList.add('ok');
          this.onSaved?.(entry, body);
        } else {
          result.textContent = `Not saved: ${errorMessage(status, body)}`;
          result.classList.add('failed');
          button.disabled = status === 409 || status === 404;
        }
      } catch (error) {
        result.textContent = `Not saved: ${error.message}`;
        result.classList.add('failed');
        button.disabled = false;
      }
    });
    box.append(button, result);
    return box;
  }
}

function savedText(saved) {
  const where = saved.cassette ? String(saved.cassette) : 'the cassette';
  return Number.isSafeInteger(saved.interaction) ? `Saved as interaction ${saved.interaction} of ${where}.` : `Saved to ${where}.`;
}
